//! The tree walk: visits every node of a parsed command line, finds every command (also in
//! substitutions, subshells, pipelines, functions, heredocs) and checks redirections,
//! assignments and function definitions on the way.

use std::ops::Range;

use tree_sitter::Node;

use crate::model::{Finding, Profile};
use crate::parse::parse;
use crate::rules::RuleId;
use crate::source::{Mapped, Source};
use crate::word::Word;
use crate::{commands, paths};

/// How many shell strings deep (`sh -c`, `eval`, heredocs fed to shells) the analyzer follows.
pub(crate) const MAX_NESTING: usize = 8;
/// How deep in one syntax tree the analyzer follows.
const MAX_TREE_DEPTH: usize = 200;

/// Where a command's standard input comes from, as far as the analyzer cares.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stdin<'t> {
    /// A file, or nothing the analyzer can see.
    Opaque,
    /// The standard input the command line itself was started with: for a hook, the
    /// payload.
    Inherited,
    /// The output of `from` (a pipeline stage), which may read `here` (a heredoc attached to
    /// it).
    Pipe {
        /// The stage before.
        from: Node<'t>,
        /// A heredoc redirect of that stage.
        here: Option<Node<'t>>,
    },
    /// A here-string or heredoc redirect node.
    Here(Node<'t>),
}

/// One command being checked: where it is, its input and its redirections.
#[derive(Debug, Clone)]
pub(crate) struct Call<'t> {
    /// Original byte range of the command (from its name, for wrapped commands).
    pub span: Range<usize>,
    /// Standard input.
    pub stdin: Stdin<'t>,
    /// `file_redirect` nodes of the command and of the statement around it.
    pub redirects: Vec<Node<'t>>,
}

/// The text being walked and how deep in nested shell strings it sits.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'s, 'a> {
    pub src: &'s Source<'a>,
    pub nesting: usize,
}

/// Collects findings for one analysis.
pub(crate) struct Analyzer {
    pub profile: Profile,
    pub findings: Vec<Finding>,
    /// Current depth in syntax trees, counted across nested shell strings.
    depth: usize,
    /// An earlier `cd` went to a protected directory (`cd /`, `cd ~`, `cd`): relative globs
    /// like `*` may now name one's contents.
    pub cwd_protected: bool,
    /// The directory a static `cd`/`pushd` earlier in the text went to (normalised), when it
    /// is known: relative write targets are resolved against it.
    pub cwd: Option<String>,
}

impl Analyzer {
    pub fn new(profile: Profile) -> Self {
        Analyzer {
            profile,
            findings: Vec::new(),
            depth: 0,
            cwd_protected: false,
            cwd: None,
        }
    }

    /// Reports a finding of `rule` over `span` (original bytes), unless the profile ignores it.
    pub fn report(&mut self, rule: RuleId, span: Range<usize>, message: impl Into<String>) {
        let rule = rule.rule();
        if let Some(verdict) = rule.severity.verdict(self.profile) {
            self.findings.push(Finding {
                rule: rule.id,
                verdict,
                span,
                message: message.into(),
            });
        }
    }

    /// Parses and walks `src`, `nesting` shell strings deep; `whole` is the original range the
    /// source came from (for findings about it as a whole).
    pub fn source(&mut self, src: &Source<'_>, nesting: usize, whole: Range<usize>) {
        if nesting > MAX_NESTING {
            self.report(
                RuleId::AnalysisLimit,
                whole,
                format!("shell strings nested more than {MAX_NESTING} levels deep"),
            );
            return;
        }
        let Some(tree) = parse(&src.text) else {
            self.report(RuleId::ParseError, whole, "the command could not be parsed");
            return;
        };
        let root = tree.root_node();
        if let Some(joined) = join_continuations(src, root) {
            // Bash removes `\<newline>` before it splits words; tree-sitter reads it as a
            // blank. Analyse the text bash sees (spans still point at the original).
            let src = Source::nested(joined, src.args.clone());
            return self.source(&src, nesting, whole);
        }
        if root.has_error() {
            let at = first_error(root).map_or(whole, |n| src.orig(n.byte_range()));
            self.report(
                RuleId::ParseError,
                at,
                "the command does not parse as bash (syntax error or unterminated quote)",
            );
        } else if let Some(bad) = glued_comment(src, root) {
            self.report(
                RuleId::ParseError,
                src.orig(bad.byte_range()),
                "`#` inside a word starts no comment in bash, but the parser read one here",
            );
        } else if let Some(bad) = misread_heredoc(src, root) {
            self.report(
                RuleId::ParseError,
                src.orig(bad.byte_range()),
                "a heredoc whose first line starts with a backslash cannot be read reliably",
            );
        }
        let cx = Cx { src, nesting };
        self.visit(cx, root, Stdin::Inherited);
    }

    fn visit(&mut self, cx: Cx<'_, '_>, node: Node<'_>, stdin: Stdin<'_>) {
        if self.depth >= MAX_TREE_DEPTH {
            self.report(
                RuleId::AnalysisLimit,
                cx.src.orig(node.byte_range()),
                format!("syntax nested more than {MAX_TREE_DEPTH} levels deep"),
            );
            return;
        }
        self.depth += 1;
        self.visit_kind(cx, node, stdin);
        self.depth -= 1;
    }

    fn visit_kind(&mut self, cx: Cx<'_, '_>, node: Node<'_>, stdin: Stdin<'_>) {
        match node.kind() {
            "command" => {
                self.command(cx, node, stdin, &[]);
                self.command_parts(cx, node);
            }
            "pipeline" => self.pipeline(cx, node, stdin),
            "redirected_statement" => self.redirected(cx, node, stdin),
            "file_redirect" => {
                self.file_redirect(cx, node);
                self.children(cx, node, Stdin::Opaque);
            }
            "function_definition" => {
                self.fork_bomb(cx, node);
                self.children(cx, node, Stdin::Opaque);
            }
            "variable_assignment" => {
                self.assignment(cx, node);
                self.children(cx, node, Stdin::Opaque);
            }
            "unset_command" => {
                self.unset(cx, node);
                self.children(cx, node, Stdin::Opaque);
            }
            "command_substitution" | "process_substitution" => {
                let raw = &cx.src.text[node.byte_range()];
                if raw.starts_with('`') && raw.contains("\\`") {
                    self.report(
                        RuleId::ParseError,
                        cx.src.orig(node.byte_range()),
                        "escaped backticks inside backticks (nested substitutions) cannot be read reliably",
                    );
                }
                let inner = match stdin {
                    Stdin::Inherited => Stdin::Inherited,
                    _ => Stdin::Opaque,
                };
                self.children(cx, node, inner);
            }
            "expansion" => {
                // tree-sitter leaves substitutions in some operator words as plain text
                // (`${x:-`cmd`}`, `${x#$(cmd)}`).
                let mut cursor = node.walk();
                let leaves: Vec<Node<'_>> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.named_child_count() == 0)
                    .collect();
                for leaf in leaves {
                    self.unparsed_substitutions(cx, leaf.byte_range());
                }
                self.children(cx, node, Stdin::Opaque);
            }
            "heredoc_body" => {
                if !crate::word::heredoc_is_quoted(&cx.src.text, node) {
                    // Text tree-sitter did not parse (`<<-` bodies, backticks).
                    let mut pos = node.start_byte();
                    let mut cursor = node.walk();
                    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                    for child in children {
                        if child.start_byte() > pos {
                            self.unparsed_substitutions(cx, pos..child.start_byte());
                        }
                        if child.kind() == "heredoc_content" {
                            self.unparsed_substitutions(cx, child.byte_range());
                        }
                        pos = pos.max(child.end_byte());
                    }
                    if node.end_byte() > pos {
                        self.unparsed_substitutions(cx, pos..node.end_byte());
                    }
                }
                self.children(cx, node, stdin);
            }
            "comment" => {}
            _ => self.children(cx, node, stdin),
        }
    }

    fn children(&mut self, cx: Cx<'_, '_>, node: Node<'_>, stdin: Stdin<'_>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.visit(cx, child, stdin);
        }
    }

    /// The parts of a command node: arguments (for substitutions inside them), assignments,
    /// redirects.
    fn command_parts(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "heredoc_redirect" {
                self.heredoc(cx, child, node);
            } else {
                self.visit(cx, child, Stdin::Opaque);
            }
        }
    }

    fn pipeline(&mut self, cx: Cx<'_, '_>, node: Node<'_>, stdin: Stdin<'_>) {
        let mut cursor = node.walk();
        let mut input = stdin;
        for stage in node.named_children(&mut cursor) {
            self.visit(cx, stage, input);
            input = Stdin::Pipe {
                from: stage,
                here: None,
            };
        }
    }

    fn redirected(&mut self, cx: Cx<'_, '_>, node: Node<'_>, stdin: Stdin<'_>) {
        let mut cursor = node.walk();
        let mut body = None;
        let mut redirects = Vec::new();
        let mut input = None;
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("body") => body = Some(child),
                Some("redirect") => {
                    match child.kind() {
                        "herestring_redirect" | "heredoc_redirect" => {
                            input = Some(Stdin::Here(child))
                        }
                        "file_redirect" if reads_file(cx, child) => input = Some(Stdin::Opaque),
                        _ => {}
                    }
                    redirects.push(child);
                }
                _ => {}
            }
        }
        if let Some(body) = body {
            let files: Vec<Node<'_>> = redirects
                .iter()
                .copied()
                .filter(|r| r.kind() == "file_redirect")
                .collect();
            self.tail(cx, body, stdin, input, &files);
        }
        for redirect in redirects {
            match (redirect.kind(), body) {
                ("heredoc_redirect", Some(owner)) => self.heredoc(cx, redirect, owner),
                _ => self.visit(cx, redirect, Stdin::Opaque),
            }
        }
    }

    /// Visits `node`, applying a statement's redirections to the command they belong to: bash
    /// binds `a | b <<EOF` and `a && b > f` to `b`, where tree-sitter puts them on the whole
    /// pipeline or list.
    fn tail(
        &mut self,
        cx: Cx<'_, '_>,
        node: Node<'_>,
        stdin: Stdin<'_>,
        input: Option<Stdin<'_>>,
        files: &[Node<'_>],
    ) {
        if self.depth >= MAX_TREE_DEPTH {
            return self.visit(cx, node, stdin);
        }
        self.depth += 1;
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        match node.kind() {
            "command" => {
                self.command(cx, node, input.unwrap_or(stdin), files);
                self.command_parts(cx, node);
            }
            "pipeline" | "list" => {
                let piped = node.kind() == "pipeline";
                let mut stage_input = stdin;
                for (i, child) in children.iter().enumerate() {
                    if i + 1 == children.len() {
                        self.tail(cx, *child, stage_input, input, files);
                    } else {
                        self.visit(cx, *child, stage_input);
                    }
                    if piped {
                        stage_input = Stdin::Pipe {
                            from: *child,
                            here: None,
                        };
                    }
                }
            }
            _ => self.visit(cx, node, input.unwrap_or(stdin)),
        }
        self.depth -= 1;
    }

    /// A heredoc redirect: its body's substitutions, and commands written after the
    /// delimiter on the same line (`cat <<EOF | sh`), which read `owner`'s output.
    fn heredoc(&mut self, cx: Cx<'_, '_>, node: Node<'_>, owner: Node<'_>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let stdin = match child.kind() {
                "pipeline" => Stdin::Pipe {
                    from: owner,
                    here: Some(node),
                },
                _ => Stdin::Opaque,
            };
            self.visit(cx, child, stdin);
        }
    }

    /// Builds the words of a command node and checks it.
    fn command(&mut self, cx: Cx<'_, '_>, node: Node<'_>, stdin: Stdin<'_>, outer: &[Node<'_>]) {
        let mut words = Vec::new();
        let mut call = Call {
            span: cx.src.orig(node.byte_range()),
            stdin,
            redirects: outer.to_vec(),
        };
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("name") => {
                    if let Some(word) = child.named_child(0) {
                        words.push(Word::read(cx.src, word));
                    }
                }
                Some("argument") if child.is_named() => words.push(Word::read(cx.src, child)),
                Some("redirect") => match child.kind() {
                    "herestring_redirect" | "heredoc_redirect" => {
                        call.stdin = Stdin::Here(child);
                    }
                    "file_redirect" => {
                        if reads_file(cx, child) {
                            call.stdin = Stdin::Opaque;
                        }
                        call.redirects.push(child);
                    }
                    _ => {}
                },
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
        if !self.expand_braces(cx, &mut words) {
            return;
        }
        for word in words.iter().skip(1) {
            if word
                .node
                .is_some_and(|n| crate::word::unquoted_ifs(&cx.src.text, n))
            {
                self.report(
                    RuleId::ObfuscatedCommand,
                    word.span.clone(),
                    "an unquoted `$IFS` splits this word into hidden words (obfuscation)",
                );
            }
        }
        commands::check(self, cx, &words, &call);
    }

    /// Brace-expands the arguments in `words` as bash does before running the command
    /// (`rm {-rf,/}` is `rm -rf /`); false (and `analysis-limit`) when there are too many.
    fn expand_braces(&mut self, cx: Cx<'_, '_>, words: &mut Vec<Word<'_>>) -> bool {
        let braced = |w: &Word<'_>| {
            w.text.contains('{')
                && w.node.is_some_and(|n| {
                    crate::braces::has_unquoted_brace(&cx.src.text[n.byte_range()])
                })
        };
        if !words.iter().skip(1).any(braced) {
            return true;
        }
        let mut out = Vec::with_capacity(words.len());
        for (i, word) in words.drain(..).enumerate() {
            if i == 0 || !braced(&word) {
                out.push(word);
                continue;
            }
            let Some(alts) = crate::braces::expand(&word.text) else {
                self.report(
                    RuleId::AnalysisLimit,
                    word.span.clone(),
                    format!(
                        "brace expansion into more than {} words",
                        crate::braces::MAX_BRACE_WORDS
                    ),
                );
                return false;
            };
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
            if out.len() > crate::braces::MAX_BRACE_WORDS {
                self.report(
                    RuleId::AnalysisLimit,
                    word.span.clone(),
                    format!(
                        "brace expansion into more than {} words",
                        crate::braces::MAX_BRACE_WORDS
                    ),
                );
                return false;
            }
        }
        *words = out;
        true
    }

    fn file_redirect(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let Some(op) = redirect_operator(cx, node) else {
            return;
        };
        if !op.contains('>') {
            return;
        }
        let mut cursor = node.walk();
        let destinations: Vec<Node<'_>> = node
            .children_by_field_name("destination", &mut cursor)
            .collect();
        for dest in destinations.into_iter().take(1) {
            let word = Word::read(cx.src, dest);
            if matches!(op, ">&" | "<&") && (dest.kind() == "number" || word.text == "-") {
                continue;
            }
            let span = cx.src.orig(node.byte_range());
            self.written(span.clone(), &word.text, &format!("redirection `{op}`"));
            self.dynamic_write(span, &word, &format!("redirection `{op}`"));
        }
    }

    /// Finds `` `…` `` and `$(…)` in `range`, text that tree-sitter did not parse, and analyses
    /// their code; blocks when one is unterminated or nests escaped backticks.
    fn unparsed_substitutions(&mut self, cx: Cx<'_, '_>, range: Range<usize>) {
        let text = &cx.src.text[range.clone()];
        if !text.contains(['`', '$']) {
            return;
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let (open, inner_start) = match bytes[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'`' => (b'`', i + 1),
                b'$' if bytes.get(i + 1) == Some(&b'(') => (b')', i + 2),
                _ => {
                    i += 1;
                    continue;
                }
            };
            let close = if open == b'`' {
                closing_backtick(bytes, inner_start)
            } else {
                closing_paren(bytes, inner_start)
            };
            let at = range.start + i;
            let Some(end) = close else {
                self.report(
                    RuleId::ParseError,
                    cx.src.orig(at..range.end),
                    "a substitution the parser left as text is unterminated or nests backticks",
                );
                return;
            };
            let inner = range.start + inner_start..range.start + end;
            let mut code = Mapped::default();
            for (k, c) in cx.src.text[inner.clone()].char_indices() {
                let b = inner.start + k..inner.start + k + c.len_utf8();
                code.push(&cx.src.text[b.clone()], cx.src.orig(b));
            }
            let src = Source::nested(code, cx.src.args.clone());
            self.source(&src, cx.nesting + 1, cx.src.orig(at..range.start + end + 1));
            i = end + 1;
        }
    }

    /// Reports a write by `how` to a file whose name is only known at run time.
    pub fn dynamic_write(&mut self, span: Range<usize>, file: &Word<'_>, how: &str) {
        let pipe = file
            .node
            .is_some_and(|n| n.kind() == "process_substitution");
        if file.unknown_name && !file.any && !pipe {
            self.report(
                RuleId::DynamicTarget,
                span,
                format!(
                    "{how} writes to a file named at run time (`{}`), which could be any file",
                    file.text.replace(crate::word::UNKNOWN, "…")
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

    /// Reports a write to `path` by `how` if the path is sensitive.
    pub fn written(&mut self, span: Range<usize>, path: &str, how: &str) {
        let path = &self.resolve(path);
        let Some(kind) = paths::sensitive(path) else {
            return;
        };
        let shown = path.replace(crate::word::UNKNOWN, "…");
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
        };
        self.report(rule, span, format!("{how} writes to {what} (`{shown}`)"));
    }

    fn assignment(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let name = node
            .child_by_field_name("name")
            .map(|n| &cx.src.text[n.byte_range()]);
        let word = node
            .child_by_field_name("value")
            .map(|v| Word::read(cx.src, v));
        let value = word.as_ref().map(|w| w.text.clone()).unwrap_or_default();
        // `X=/; rm -rf "$X"`: remember the value for later words (not for `X=/ cmd`, whose
        // own words see the old value).
        let standalone = node.parent().is_none_or(|p| p.kind() != "command");
        if let Some(name) = name.filter(|_| standalone) {
            let known = word.as_ref().is_none_or(|w| !w.unknown);
            cx.src.assign(name, known.then(|| value.clone()));
        }
        let tampers = match name {
            Some("HISTFILE" | "HISTIGNORE" | "HISTCONTROL") => true,
            Some("HISTSIZE" | "HISTFILESIZE" | "SAVEHIST") => value == "0",
            _ => false,
        };
        if tampers {
            self.report(
                RuleId::HistoryTamper,
                cx.src.orig(node.byte_range()),
                "changing the history file or size hides what the shell ran",
            );
        }
    }

    fn unset(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let mut cursor = node.walk();
        let hist = node
            .named_children(&mut cursor)
            .any(|n| &cx.src.text[n.byte_range()] == "HISTFILE");
        if hist {
            self.report(
                RuleId::HistoryTamper,
                cx.src.orig(node.byte_range()),
                "`unset HISTFILE` stops the shell from recording history",
            );
        }
    }

    /// A function whose body calls itself in a pipeline or in the background.
    fn fork_bomb(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let (Some(name), Some(body)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("body"),
        ) else {
            return;
        };
        let name = &cx.src.text[name.byte_range()];
        if spawns_itself(cx, body, name) {
            self.report(
                RuleId::ForkBomb,
                cx.src.orig(node.byte_range()),
                format!("function `{name}` calls itself in a pipeline or in the background"),
            );
        }
    }
}

fn spawns_itself(cx: Cx<'_, '_>, body: Node<'_>, name: &str) -> bool {
    descendants(body).any(|node| {
        node.kind() == "command"
            && node
                .child_by_field_name("name")
                .is_some_and(|n| &cx.src.text[n.byte_range()] == name)
            && concurrent(node, body)
    })
}

/// Whether `node` runs concurrently with its caller: inside a pipeline or followed by `&`,
/// looking up to `body`.
fn concurrent(mut node: Node<'_>, body: Node<'_>) -> bool {
    while node.id() != body.id() {
        if node.next_sibling().is_some_and(|s| s.kind() == "&") {
            return true;
        }
        let Some(parent) = node.parent() else {
            return false;
        };
        if parent.kind() == "pipeline" {
            return true;
        }
        node = parent;
    }
    false
}

/// The destinations of a file redirect after the first: words of the command in bash.
pub(crate) fn extra_destinations(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children_by_field_name("destination", &mut cursor)
        .skip(1)
        .collect()
}

fn redirect_operator<'s>(cx: Cx<'s, '_>, node: Node<'_>) -> Option<&'s str> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .find(|c| !c.is_named())
        .map(|c| &cx.src.text[c.byte_range()])
}

fn reads_file(cx: Cx<'_, '_>, node: Node<'_>) -> bool {
    redirect_operator(cx, node) == Some("<")
}

/// The index of the backtick closing one opened before `from`; `None` when there is none or
/// an escaped backtick (a nested substitution) comes first.
fn closing_backtick(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'`') => return None,
            b'\\' => i += 2,
            b'`' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index of the `)` closing a `$(` opened before `from`, counting parentheses.
fn closing_paren(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 1usize;
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The text with every line continuation (`\<newline>`) that bash removes before splitting
/// words taken out, or `None` when there is none. Bash keeps them in single quotes, `$'…'`,
/// comments and heredoc bodies (an unquoted heredoc's continuations are decoded with its
/// words); a backslash that is itself escaped (`\\<newline>`) does not continue the line.
fn join_continuations(src: &Source<'_>, root: Node<'_>) -> Option<Mapped> {
    let text = src.text.as_ref();
    if !text.contains("\\\n") {
        return None;
    }
    let bytes = text.as_bytes();
    let mut cut = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if literal_at(root, i) {
            i += 1;
            continue;
        }
        if bytes[i + 1] == b'\n' {
            cut.push(i);
        }
        // Skip the escaped character: `\\` is one escaped backslash.
        i += 2;
    }
    if cut.is_empty() {
        return None;
    }
    let mut out = Mapped::default();
    let mut pos = 0;
    for at in cut.into_iter().chain(std::iter::once(text.len())) {
        for (k, c) in text[pos..at].char_indices() {
            let start = pos + k;
            let end = start + c.len_utf8();
            out.push(&text[start..end], src.orig(start..end));
        }
        pos = at + 2;
    }
    Some(out)
}

/// Whether byte `at` sits where bash takes backslashes literally (or decodes them later).
fn literal_at(root: Node<'_>, at: usize) -> bool {
    let mut node = root.descendant_for_byte_range(at, at + 1);
    while let Some(n) = node {
        match n.kind() {
            "raw_string" | "ansi_c_string" | "comment" | "heredoc_body" | "heredoc_content" => {
                return true;
            }
            "command_substitution" | "process_substitution" => return false,
            _ => {}
        }
        node = n.parent();
    }
    false
}

/// A comment that tree-sitter-bash starts in the middle of a word (`[ 1 ]#; rm -rf /`):
/// bash starts a comment only at the start of a word, so it runs what follows.
fn glued_comment<'t>(src: &Source<'_>, root: Node<'t>) -> Option<Node<'t>> {
    if !src.text.contains('#') {
        return None;
    }
    let bytes = src.text.as_bytes();
    descendants(root)
        .filter(|n| n.kind() == "comment")
        .find(|n| {
            let before = n.start_byte().checked_sub(1).and_then(|i| bytes.get(i));
            before.is_some_and(|b| {
                !b.is_ascii_whitespace()
                    && !matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
            })
        })
}

/// tree-sitter-bash 0.25 reads a heredoc whose first line starts with `\` as arguments on the
/// `<<EOF` line (and an empty body), without an error node. Such a word starts with the
/// newline that ends the `<<EOF` line, which no correct parse produces.
fn misread_heredoc<'t>(src: &Source<'_>, root: Node<'t>) -> Option<Node<'t>> {
    if !src.text.contains("<<") {
        return None;
    }
    descendants(root)
        .filter(|n| n.kind() == "heredoc_redirect")
        .find_map(|redirect| {
            let mut cursor = redirect.walk();
            redirect
                .named_children(&mut cursor)
                .find(|c| src.text[c.byte_range()].starts_with('\n'))
        })
}

fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    descendants(node).find(|n| n.is_error() || n.is_missing())
}

/// `node` and everything below it, in document order, without recursion (trees can be deep).
pub(crate) fn descendants<'t>(node: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = node.walk();
    let mut started = false;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if !started {
            started = true;
            return Some(cursor.node());
        }
        if cursor.goto_first_child() {
            return Some(cursor.node());
        }
        loop {
            if cursor.depth() == 0 {
                done = true;
                return None;
            }
            if cursor.goto_next_sibling() {
                return Some(cursor.node());
            }
            if !cursor.goto_parent() {
                done = true;
                return None;
            }
        }
    })
}
