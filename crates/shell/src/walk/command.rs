//! One command node: its words, brace-expanded as bash does, then the rules; and the files
//! its redirections write.

use tree_sitter::Node;

use super::{Analyzer, Call, Cx, Stdin};
use crate::limits::{self, MAX_BRACE_WORDS};
use crate::rules::RuleId;
use crate::syntax::{self, extra_destinations, fields};
use crate::word::{self, Word};
use crate::{braces, commands, paths};

/// Work units a redirection's target costs besides its bytes: it is matched against every
/// protected place, globs included.
const WRITE_TARGET_COST: usize = 16;

/// Work units charged for compiling one glob of a write target (some microseconds, where a
/// unit is some tens of nanoseconds).
const GLOB_UNITS: usize = 2048;

impl Analyzer {
    /// Builds the words of a command node and checks it.
    pub(super) fn command(
        &mut self,
        cx: Cx<'_, '_>,
        node: Node<'_>,
        stdin: Stdin<'_>,
        outer: &[Node<'_>],
    ) {
        let mut words = Vec::new();
        let mut call = Call {
            span: cx.src.orig(node.byte_range()),
            stdin,
            redirects: outer.to_vec(),
            prefix: Vec::new(),
        };
        for (field, child) in fields(node) {
            match field {
                Some("name") => {
                    if let Some(word) = child.named_child(0) {
                        words.push(Word::read(cx.src, word));
                    }
                }
                Some("argument")
                    if child.is_named() && !syntax::glued_descriptor(&cx.src.text, child) =>
                {
                    words.push(Word::read(cx.src, child))
                }
                Some("redirect") => match child.kind() {
                    "herestring_redirect" | "heredoc_redirect" => {
                        call.stdin = Stdin::Here(child);
                    }
                    "file_redirect" => {
                        if syntax::reads_file(&cx.src.text, child) {
                            call.stdin = Stdin::Opaque;
                        }
                        call.redirects.push(child);
                    }
                    _ => {}
                },
                None if child.kind() == "variable_assignment" => call.prefix.push(child),
                _ => {}
            }
        }
        // tree-sitter reads the words after a redirection (`rm 2>/dev/null -rf /`) as more
        // destinations of it; bash takes only the first and gives the rest to the command.
        let mut extra: Vec<Word<'_>> = call
            .redirects
            .iter()
            .flat_map(|r| extra_destinations(*r))
            .map(|n| Word::read(cx.src, n))
            .collect();
        if !extra.is_empty() {
            words.append(&mut extra);
            if let Some(rest) = words.get_mut(1..) {
                rest.sort_by_key(|w| w.node.map_or(usize::MAX, |n| n.start_byte()));
            }
            let end = words
                .iter()
                .map(|w| w.span.end)
                .max()
                .unwrap_or(call.span.end);
            call.span.end = call.span.end.max(end);
        }
        // Bash splits expansions into words (`"$@"`, `"${a[@]}"`, unquoted `$X` holding
        // blanks) before the command sees them.
        if words.iter().any(|w| !w.fields.is_empty()) {
            let split: usize = words.iter().map(|w| w.fields.len().max(1)).sum();
            if split > limits::MAX_SPLIT_WORDS {
                let why = format!(
                    "word splitting into more than {} words",
                    limits::MAX_SPLIT_WORDS
                );
                self.report(RuleId::AnalysisLimit, call.span.clone(), why);
                return;
            }
            words = words.into_iter().flat_map(Word::split).collect();
        }
        if self.halted() || !self.expand_braces(cx, &mut words) {
            return;
        }
        for word in words.iter().skip(1) {
            if word.node.is_some_and(|n| {
                word::unquoted_ifs(&cx.src.text, n, &self.budget, word.span.clone())
            }) {
                self.report(
                    RuleId::ObfuscatedCommand,
                    word.span.clone(),
                    "an unquoted `$IFS` splits this word into hidden words (obfuscation)",
                );
            }
        }
        commands::check(self, cx, &words, &call);
        self.script_written(cx, &words, &call);
    }

    /// Brace-expands the arguments in `words` as bash does before running the command
    /// (`rm {-rf,/}` is `rm -rf /`); false (and `analysis-limit`) when there are too many.
    fn expand_braces(&mut self, cx: Cx<'_, '_>, words: &mut Vec<Word<'_>>) -> bool {
        let braced = |w: &Word<'_>| {
            w.text.contains('{')
                && w.node
                    .is_some_and(|n| braces::has_unquoted_brace(&cx.src.text[n.byte_range()]))
        };
        if !words.iter().skip(1).any(braced) {
            return true;
        }
        let too_many = format!(
            "brace expansion into more than {MAX_BRACE_WORDS} words or {} bytes",
            limits::MAX_BRACE_BYTES
        );
        let mut out = Vec::with_capacity(words.len());
        for (i, word) in words.drain(..).enumerate() {
            if i == 0 || !braced(&word) {
                out.push(word);
                continue;
            }
            let Some(alts) = braces::expand(&word.text) else {
                self.report(RuleId::AnalysisLimit, word.span.clone(), too_many);
                return false;
            };
            let bytes: usize = alts.iter().map(String::len).sum();
            if !self.budget.charge(bytes, word.span.clone()) {
                return false;
            }
            if alts.len() == 1 && alts[0] == word.text {
                out.push(word);
                continue;
            }
            for alt in alts {
                let mut w = word.clone();
                w.text = alt;
                w.node = None;
                w.plain = false;
                out.push(w);
            }
            if out.len() > MAX_BRACE_WORDS {
                self.report(RuleId::AnalysisLimit, word.span.clone(), too_many);
                return false;
            }
        }
        *words = out;
        true
    }

    pub(super) fn file_redirect(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let Some(op) = syntax::redirect_operator(&cx.src.text, node) else {
            return;
        };
        if !op.contains('>') {
            return;
        }
        let mut cursor = node.walk();
        let destination = node
            .children_by_field_name("destination", &mut cursor)
            .next();
        if let Some(dest) = destination {
            let word = Word::read(cx.src, dest);
            if matches!(op, ">&" | "<&") && (dest.kind() == "number" || word.text == "-") {
                return;
            }
            let span = cx.src.orig(node.byte_range());
            // A write target is matched against every protected place, globs included.
            if !self
                .budget
                .charge(word.text.len() + WRITE_TARGET_COST, span.clone())
            {
                return;
            }
            self.written_word(span.clone(), &word, &format!("redirection `{op}`"));
            self.truncated(span.clone(), &word.text, op);
            self.dynamic_write(span, &word, &format!("redirection `{op}`"));
        }
    }

    /// Reports a write by `how` to a file whose name is only known at run time.
    pub fn dynamic_write(&mut self, span: std::ops::Range<usize>, file: &Word<'_>, how: &str) {
        let pipe = file
            .node
            .is_some_and(|n| n.kind() == "process_substitution");
        if file.unknown_name && !file.any && !pipe {
            self.report(
                RuleId::DynamicTarget,
                span,
                format!(
                    "{how} writes to a file named at run time (`{}`), which could be any file",
                    file.text.replace(word::UNKNOWN, "…")
                ),
            );
        }
    }

    /// `path` resolved against the directory of an earlier static `cd` (`cd ~/.ssh && … >>
    /// authorized_keys`); unchanged when it is absolute or no such `cd` was seen.
    pub fn resolve(&self, path: &str) -> String {
        match &self.cwd {
            Some(dir) if !path.starts_with(['/', '~']) => format!("{dir}/{path}"),
            _ => path.to_owned(),
        }
    }

    /// A write to the file `word` by `how`: reported if the path is sensitive, and listed among
    /// the text's static write targets if its value is known.
    pub fn written_word(&mut self, span: std::ops::Range<usize>, word: &Word<'_>, how: &str) {
        if !word.unknown {
            self.note_write(&word.text);
        }
        self.written(span, &word.text, how);
    }

    /// Lists `path` (resolved and normalised) among the text's static write targets, unless
    /// it is a device or the list is full. The caller knows that the path is static.
    pub fn note_write(&mut self, path: &str) {
        if path.contains(word::UNKNOWN) || self.writes.len() >= limits::MAX_WRITES {
            return;
        }
        let path = paths::normalize(&self.resolve(path));
        let device = path.starts_with("/dev/") || path.starts_with("/proc/self/fd/");
        if !device && !path.is_empty() && !self.writes.contains(&path) {
            self.writes.push(path);
        }
    }

    /// Reports a write to `path` by `how` if the path is sensitive.
    pub fn written(&mut self, span: std::ops::Range<usize>, path: &str, how: &str) {
        let path = &self.resolve(path);
        let cost = path.len() + 1 + GLOB_UNITS * paths::globs(path).min(paths::MAX_GLOB_PARTS);
        if !self.budget.charge(cost, span.clone()) {
            return;
        }
        let kind = match paths::sensitive(path) {
            Ok(Some(kind)) => kind,
            Ok(None) => return,
            Err(paths::TooComplex) => {
                self.report(
                    RuleId::AnalysisLimit,
                    span,
                    format!(
                        "{how} writes to a path with more than {} glob components or brace alternatives",
                        paths::MAX_GLOB_PARTS
                    ),
                );
                return;
            }
        };
        let shown = path.replace(word::UNKNOWN, "…");
        let (rule, what) = match kind {
            paths::Sensitive::Device => (RuleId::DeviceWrite, "a device"),
            paths::Sensitive::Ssh => (RuleId::SshWrite, "an ssh directory"),
            paths::Sensitive::Startup => (RuleId::ShellStartupWrite, "a shell start-up file"),
            paths::Sensitive::History => (RuleId::HistoryTamper, "a shell history file"),
            paths::Sensitive::Kernel => (RuleId::SystemShutdown, "a kernel control file"),
            paths::Sensitive::Persistence => (
                RuleId::Persistence,
                "a file that makes programs run later on their own",
            ),
            paths::Sensitive::Auth => (
                RuleId::SystemAuthWrite,
                "system authentication or start-up configuration",
            ),
            paths::Sensitive::Autorun => (
                RuleId::AutorunWrite,
                "a file another program loads and runs on its own",
            ),
        };
        self.report(rule, span, format!("{how} writes to {what} (`{shown}`)"));
    }
}
