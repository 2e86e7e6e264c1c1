//! The analyzer's inputs and outputs: profiles, verdicts, severities, findings.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crate::ShellError;

/// Who wrote the command, which decides how strict the analysis is.
///
/// | profile | used for | `escalate` means | inline interpreter code |
/// |---|---|---|---|
/// | `trusted` | built-in, admin-config and agent-config hooks | allowed | refused (`block`) |
/// | `external` | skill, plugin and user-config hooks | refused | refused (`block`) |
/// | `agent` | the agent's own bash tool | ask a human | allowed (no finding) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// Built-in, admin-config and agent-config hooks.
    Trusted,
    /// Skill, plugin and user-config hooks: the strictest profile.
    External,
    /// The agent's own bash tool.
    Agent,
}

impl Profile {
    /// Every profile, strictest first.
    pub const ALL: [Profile; 3] = [Profile::External, Profile::Trusted, Profile::Agent];

    /// The profile's name: `trusted`, `external` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Trusted => "trusted",
            Profile::External => "external",
            Profile::Agent => "agent",
        }
    }
}

impl FromStr for Profile {
    type Err = ShellError;

    /// Parses `trusted`, `external` or `agent` (exact, lower case).
    ///
    /// # Errors
    ///
    /// [`ShellError::UnknownProfile`] for any other name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "trusted" => Ok(Profile::Trusted),
            "external" => Ok(Profile::External),
            "agent" => Ok(Profile::Agent),
            other => Err(ShellError::UnknownProfile(other.to_owned())),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the analyzer says about a command. Ordered by strictness: `Allow < Escalate < Block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing found.
    Allow,
    /// Needs human judgment: refused for external hooks, allowed for trusted ones, routed to a
    /// human for the agent's bash tool.
    Escalate,
    /// Refused for every profile.
    Block,
}

impl Verdict {
    /// The verdict's name: `allow`, `escalate` or `block`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Escalate => "escalate",
            Verdict::Block => "block",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How serious a [rule](crate::Rule) is; the profile turns it into a [`Verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// Needs human judgment: [`Verdict::Escalate`] for every profile.
    Escalate,
    /// [`Verdict::Block`] for every profile.
    Block,
    /// [`Verdict::Block`] for the hook profiles (`trusted`, `external`); not reported for the
    /// `agent` profile (inline interpreter code is what an agent's bash tool is for).
    BlockForHooks,
}

impl Severity {
    /// The verdict a finding of this severity gives under `profile`; `None` when the profile
    /// does not report it at all.
    pub fn verdict(self, profile: Profile) -> Option<Verdict> {
        match (self, profile) {
            (Severity::Escalate, _) => Some(Verdict::Escalate),
            (Severity::Block, _) => Some(Verdict::Block),
            (Severity::BlockForHooks, Profile::Agent) => None,
            (Severity::BlockForHooks, _) => Some(Verdict::Block),
        }
    }

    /// The severity's name: `escalate`, `block` or `block_for_hooks`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Escalate => "escalate",
            Severity::Block => "block",
            Severity::BlockForHooks => "block_for_hooks",
        }
    }
}

/// One thing the analyzer found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The [rule](crate::rules) id, e.g. `privilege-escalation`.
    pub rule: &'static str,
    /// The verdict this finding gives under the profile the command was analysed with.
    pub verdict: Verdict,
    /// Byte range in the original command string (also for findings inside `sh -c '…'`
    /// strings, heredocs and `eval` arguments: offsets are mapped back). Always on `char`
    /// boundaries.
    pub span: Range<usize>,
    /// Why, in one sentence, for humans.
    pub message: String,
}

/// The result of [`analyze`](crate::analyze).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Analysis {
    /// The profile the command was analysed with.
    pub profile: Profile,
    /// The strictest finding's verdict; [`Verdict::Allow`] when there are no findings.
    pub verdict: Verdict,
    /// Every finding, ordered by span start, then rule id; no duplicates. At most
    /// [`MAX_FINDINGS`](crate::limits::MAX_FINDINGS) plus one `analysis-limit` finding.
    pub findings: Vec<Finding>,
    /// Units of analysis work spent (about one per syntax node visited or byte of word text
    /// decoded); at most [`MAX_WORK`](crate::limits::MAX_WORK) plus the last step's cost.
    /// Parsing is bounded separately.
    pub work: u64,
    /// The files the command writes whose path is known statically, in the order written:
    /// redirection targets (`>> ~/.myrm/audit.log`), `tee`, `sed -i` and `perl -i` files,
    /// `cp`/`mv`/`install`/`ln` destinations, `dd of=`; `~` for the home directory (also for
    /// `$HOME`), relative paths joined to the directory of an earlier static `cd`. Devices
    /// (`/dev/…`) and paths with a part only known at run time are not listed; at most
    /// [`MAX_WRITES`](crate::limits::MAX_WRITES). For telling which paths a command needs to
    /// write (`tollgate check` compares them with a hook's sandbox), not a security boundary:
    /// a command can write files the analyzer does not see.
    pub writes: Vec<String>,
    /// The programs the command runs, in the order the analyzer met them (see [`Program`]):
    /// every command name bash looks up as a file (`jq`, `./hooks/guard.sh`, `env` and the
    /// `jq` it wraps in `env jq`, names inside `sh -c '…'` strings), not builtins, reserved
    /// words or functions the text defines; and the script files shells, `source` and
    /// interpreters are given (`bash hooks/x.sh`, `python3 guard.py`). Names only known at run
    /// time are not listed, nor files the text writes before running them; each program and
    /// place once; at most [`MAX_PROGRAMS`](crate::limits::MAX_PROGRAMS). For telling which
    /// programs a command needs (a hook whose program is missing fails), not a security
    /// boundary.
    pub programs: Vec<Program>,
}

/// What a [`Program`] is to the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgramKind {
    /// A command name: bash looks it up on `PATH` when it has no `/`, else opens the path.
    Command,
    /// A script file a shell (`bash x.sh`), `source`/`.` or an interpreter (`python3 x.py`,
    /// `node x.js`, `perl`, `ruby`, `php`, `lua`, `Rscript`, `osascript`) is given to run.
    /// Relative names are relative to the working directory (shells and `source` also search
    /// `PATH` for a name without `/`).
    Script,
}

/// A program a command line runs, as [`Analysis::programs`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Program {
    /// A command name or a script file.
    pub kind: ProgramKind,
    /// The name as bash reads it, quotes removed: `jq`, `./hooks/guard.sh`, `guard.py`.
    pub name: String,
    /// Byte range of the word in the original command when the word is part of the command's
    /// own text (not of a `sh -c '…'` string, a heredoc fed to a shell or an `eval` argument,
    /// which are code inside a word): the range a caller may replace with another word. The
    /// range covers the whole word, quotes included. `None` otherwise.
    pub span: Option<Range<usize>>,
    /// A `cd`, `pushd` or `popd` came earlier in the text: a relative name may be relative to
    /// another directory than the one the command starts in.
    pub after_cd: bool,
}

impl Analysis {
    /// Whether the command must not run without more ado: `Block` always is; `Escalate` is for
    /// the `external` profile. For `agent`, `Escalate` is not refused but means "ask a human"
    /// (check `verdict == Verdict::Escalate`); for `trusted` it is allowed.
    pub fn refused(&self) -> bool {
        match self.verdict {
            Verdict::Allow => false,
            Verdict::Escalate => self.profile == Profile::External,
            Verdict::Block => true,
        }
    }
}
