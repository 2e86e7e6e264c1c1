//! What the analyzer learns about the shell while it walks a text, beyond variable values
//! (which each [`Source`](crate::source::Source) keeps): which variables hold numbers or are
//! declared integers, where the text put copies of programs, the functions it defines and
//! the scripts it writes. Like variable values it is recorded in walk order, ignoring
//! control flow.

use std::collections::{HashMap, HashSet};

use crate::source::Mapped;

/// Shell state tracked across one analysis (every text in it).
#[derive(Debug, Default)]
pub(crate) struct Tracked {
    /// Variables known to hold a number: assigned by arithmetic (`n=$((…))`, `((n++))`), by
    /// a command that prints a count (`n=$(wc -l < f)`) or by a loop over numbers.
    pub numeric: HashSet<String>,
    /// Variables declared integer (`declare -i n`): every assignment to one evaluates the value
    /// as an arithmetic expression.
    pub integers: HashSet<String>,
    /// Variables declared associative arrays (`declare -A m`): their subscripts are strings,
    /// not arithmetic.
    pub associative: HashSet<String>,
    /// Files the text made a copy of (or link to) a program at: normalised path → program name
    /// (`cp /bin/rm x` → `x` → `rm`).
    pub copies: HashMap<String, String>,
    /// Names the text set an alias for (`alias x=rm`): a shell with `expand_aliases` on (Claude
    /// Code's Bash tool runs one) runs the value where a later command is named so.
    pub aliases: HashSet<String>,
    /// Functions defined so far: name → body (as code mapped to the original bytes).
    pub functions: HashMap<String, Mapped>,
    /// Script files the text wrote with static contents (`echo 'rm -rf ~' > x.sh`):
    /// normalised path → contents, and the number of the write that made them.
    pub scripts: HashMap<String, (Mapped, usize)>,
    /// Writes of script files so far.
    pub writes: usize,
    /// Functions and scripts being checked at a call, innermost last: a call of one of them
    /// from inside itself is not followed again.
    pub running: Vec<String>,
    /// Calls already checked: function or script, then its arguments (a repeated call is
    /// not checked again).
    pub calls: HashSet<String>,
    /// Namerefs declared so far (`declare -n r=PATH`): name → the variable an assignment to
    /// it sets, `None` when that is only known at run time.
    pub namerefs: HashMap<String, Option<String>>,
    /// The names the top-level text writes other than as expansions (see
    /// `commands::environment_path`), once computed.
    pub written_names: Option<HashSet<String>>,
}

impl Tracked {
    /// Records that `name` was assigned; `numeric` when the value is a number.
    pub fn assigned(&mut self, name: &str, numeric: bool) {
        if numeric {
            if !self.numeric.contains(name) {
                self.numeric.insert(name.to_owned());
            }
        } else {
            self.numeric.remove(name);
        }
    }
}
