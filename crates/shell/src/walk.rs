//! The tree walk: visits every node of a parsed command line, finds every command (also in
//! substitutions, subshells, pipelines, functions, heredocs) and checks redirections,
//! assignments and function definitions on the way.
//!
//! The walk keeps its own stack of [`Task`]s instead of recursing, so a deep syntax tree
//! costs heap, not call stack; the only recursion left is into nested shell strings
//! ([`MAX_NESTING`] deep) and wrappers ([`MAX_WRAPPERS`] deep). Tasks run in the order a
//! recursive pre-order walk would run them, which matters: variable values and the `cd`
//! directory are recorded in walk order.
//!
//! [`MAX_WRAPPERS`]: crate::limits::MAX_WRAPPERS

mod checks;
mod command;
mod expansions;
mod values;

use std::collections::HashSet;
use std::ops::Range;
use std::rc::Rc;

use tree_sitter::{Node, TreeCursor};

use crate::limits::{self, Budget, MAX_FINDINGS, MAX_JOIN_ROUNDS, MAX_NESTING, MAX_TREE_DEPTH};

/// Work units charged for each parse of a text, on top of its parser steps.
const PARSE_COST: usize = 64;
use crate::model::{Finding, Profile};
use crate::parse::{Unparsed, parse};
use crate::rules::RuleId;
use crate::source::Source;
use crate::syntax::{self, fields, named_children};

use crate::commands::Upstream;

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
        /// The pipeline `from` is a stage of, and `from`'s index in it: the earlier stages
        /// feed `from` in turn.
        pipeline: Option<(Node<'t>, usize)>,
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
    /// `variable_assignment` nodes before the command name (`IFS=, read …`, `PATH=. ls`).
    pub prefix: Vec<Node<'t>>,
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
    /// The budgets of the analysis (the same as every [`Source`]'s in it).
    pub budget: Rc<Budget>,
    /// Current depth in syntax trees, counted across nested shell strings.
    depth: usize,
    /// Wrappers being unwrapped around the current command, counted across nested strings.
    pub wrappers: usize,
    /// An earlier `cd` went to a protected directory (`cd /`, `cd ~`, `cd`): relative globs
    /// like `*` may now name one's contents.
    pub cwd_protected: bool,
    /// The directory a static `cd`/`pushd` earlier in the text went to (normalised), when it
    /// is known: relative write targets are resolved against it.
    pub cwd: Option<String>,
    /// What pipeline stages produce, asked so far: each stage is scanned once.
    pub upstream: Upstream,
    /// The function definitions of the tree being walked that spawn themselves (node ids).
    fork_bombs: HashSet<usize>,
    /// Set once the findings or a budget overflowed: the analysis stops.
    pub stopped: bool,
    /// Shell state beyond variable values: numbers, integer variables, program copies.
    pub tracked: crate::tracked::Tracked,
    /// Files the text writes whose path is known statically (see [`Analysis::writes`]).
    ///
    /// [`Analysis::writes`]: crate::Analysis::writes
    pub writes: Vec<String>,
    /// The programs the text runs (see [`Analysis::programs`]).
    ///
    /// [`Analysis::programs`]: crate::Analysis::programs
    pub programs: crate::programs::Programs,
}

/// One step of the walk.
enum Task<'t> {
    /// Visit `node`, a child of `parent` (when known), with standard input `stdin`.
    Visit {
        node: Node<'t>,
        parent: Option<Node<'t>>,
        stdin: Stdin<'t>,
    },
    /// Visit a statement's body `node`, binding the statement's redirections to the command
    /// they belong to (see [`Analyzer::tail`]).
    Tail {
        node: Node<'t>,
        stdin: Stdin<'t>,
        input: Option<Stdin<'t>>,
        files: Rc<[Node<'t>]>,
    },
    /// A heredoc redirect `node` of the command `owner`.
    Heredoc { node: Node<'t>, owner: Node<'t> },
    /// The named children of `parent` from the one `cursor` is on: one task per node of any
    /// width, so the stack holds about one task per level, not per node.
    Children {
        cursor: TreeCursor<'t>,
        parent: Node<'t>,
        stdin: Stdin<'t>,
        kind: Children<'t>,
    },
}

/// How the children of a [`Task::Children`] are visited.
#[derive(Clone, Copy)]
enum Children<'t> {
    /// Each with the task's standard input.
    Plain,
    /// The parts of a command: heredoc redirects as [`Task::Heredoc`], the rest with no input.
    CommandParts,
    /// Pipeline stages: each reads the one before; `index` is the current one's.
    Stages { index: usize },
    /// The redirects of a statement (its other children are skipped): heredocs of the command
    /// `owner` as [`Task::Heredoc`], the rest with no input.
    Redirects { owner: Option<Node<'t>> },
}

/// The tasks still to run, with the tree depth of each.
type Tasks<'t> = Vec<(Task<'t>, usize)>;

impl Analyzer {
    pub fn new(profile: Profile, budget: Rc<Budget>) -> Self {
        Analyzer {
            profile,
            findings: Vec::new(),
            budget,
            depth: 0,
            wrappers: 0,
            cwd_protected: false,
            cwd: None,
            upstream: Upstream::default(),
            fork_bombs: HashSet::new(),
            stopped: false,
            tracked: crate::tracked::Tracked::default(),
            writes: Vec::new(),
            programs: Default::default(),
        }
    }

    /// Reports a finding of `rule` over `span` (original bytes), unless the profile ignores it.
    /// Past [`MAX_FINDINGS`] the analysis stops.
    pub fn report(&mut self, rule: RuleId, span: Range<usize>, message: impl Into<String>) {
        let rule = rule.rule();
        let Some(verdict) = rule.severity.verdict(self.profile) else {
            return;
        };
        let duplicate = self
            .findings
            .iter()
            .any(|f| f.rule == rule.id && f.span == span);
        if duplicate || self.stopped {
            return;
        }
        if self.findings.len() >= MAX_FINDINGS {
            self.stopped = true;
            return;
        }
        self.findings.push(Finding {
            rule: rule.id,
            verdict,
            span,
            message: limits::bounded_message(message.into()),
        });
    }

    /// Whether the analysis must stop: too many findings, or a budget ran out.
    pub fn halted(&self) -> bool {
        self.stopped || self.budget.exhausted()
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
        let mut joined;
        let mut src = src;
        for round in 0.. {
            if self.halted() {
                return;
            }
            let tree = match parse(&src.text, &src.budget) {
                Ok(tree) => tree,
                Err(why) => return self.unparsed(src, why, whole),
            };
            // A parse has a fixed cost (tree allocation, parser reset) that its steps do not
            // show: thousands of tiny nested texts add up.
            if !self.budget.charge(PARSE_COST, whole.clone()) {
                return;
            }
            let Some(next) = syntax::join_continuations(src, tree.root_node(), &src.budget) else {
                return self.walk_tree(src, nesting, whole, tree.root_node());
            };
            if round == MAX_JOIN_ROUNDS {
                self.report(
                    RuleId::AnalysisLimit,
                    whole,
                    format!("line continuations joined more than {MAX_JOIN_ROUNDS} times"),
                );
                return;
            }
            // Bash removes `\<newline>` before it splits words; tree-sitter reads it as a
            // blank. Analyse the text bash sees (spans still point at the original).
            let own_text = src.own_text;
            joined = src.nested(next, Rc::clone(&src.args));
            joined.own_text = own_text;
            src = &joined;
        }
    }

    fn unparsed(&mut self, src: &Source<'_>, why: Unparsed, whole: Range<usize>) {
        match why {
            Unparsed::Failed => {
                self.report(RuleId::ParseError, whole, "the command could not be parsed")
            }
            Unparsed::Budget(limit) => src.budget.exceed(limit, whole),
            Unparsed::Pipes => self.report(
                RuleId::AnalysisLimit,
                whole,
                format!(
                    "more than {} pipes: a pipeline this long is too costly to parse",
                    limits::MAX_PIPES
                ),
            ),
        }
    }

    /// Reports what is wrong with the tree of `src` as a whole, then walks it.
    fn walk_tree(&mut self, src: &Source<'_>, nesting: usize, whole: Range<usize>, root: Node<'_>) {
        if root.has_error() {
            let at = syntax::first_error(root).map_or(whole.clone(), |n| src.orig(n.byte_range()));
            self.report(
                RuleId::ParseError,
                at,
                "the command does not parse as bash (syntax error or unterminated quote)",
            );
        } else if let Some(bad) = syntax::glued_comment(&src.text, root) {
            self.report(
                RuleId::ParseError,
                src.orig(bad.byte_range()),
                "`#` inside a word starts no comment in bash, but the parser read one here",
            );
        } else if let Some(bad) = syntax::misread_heredoc(&src.text, root) {
            self.report(
                RuleId::ParseError,
                src.orig(bad.byte_range()),
                "a heredoc whose first line starts with a backslash cannot be read reliably",
            );
        }
        let cx = Cx { src, nesting };
        let (depth, upstream) = (self.depth, self.upstream.mark());
        let bombs = if defines_functions(&src.text) {
            syntax::fork_bombs(&src.text, root, &self.budget, whole.clone())
        } else {
            HashSet::new()
        };
        let outer_bombs = std::mem::replace(&mut self.fork_bombs, bombs);
        self.run(cx, root);
        self.fork_bombs = outer_bombs;
        self.depth = depth;
        // Node ids are addresses: forget this tree's before it is freed.
        self.upstream.forget(upstream);
    }

    /// Runs the walk of the tree under `root`.
    fn run<'t>(&mut self, cx: Cx<'_, '_>, root: Node<'t>) {
        let start = Task::Visit {
            node: root,
            parent: None,
            stdin: Stdin::Inherited,
        };
        let mut tasks: Tasks<'t> = vec![(start, self.depth)];
        while let Some((task, depth)) = tasks.pop() {
            if self.halted() {
                return;
            }
            let mark = tasks.len();
            self.step(cx, task, depth, &mut tasks);
            // Children were pushed in document order with the depth they run at; run them
            // first to last.
            tasks[mark..].reverse();
        }
    }

    /// Runs one task at tree depth `depth`, pushing the tasks it leads to.
    fn step<'t>(&mut self, cx: Cx<'_, '_>, task: Task<'t>, depth: usize, tasks: &mut Tasks<'t>) {
        let node = match &task {
            Task::Visit { node, .. } | Task::Tail { node, .. } | Task::Heredoc { node, .. } => {
                *node
            }
            Task::Children { parent, .. } => *parent,
        };
        if !self.budget.charge(1, cx.src.orig(node.byte_range())) {
            return;
        }
        let checked = matches!(task, Task::Visit { .. } | Task::Tail { .. });
        if depth >= MAX_TREE_DEPTH && checked {
            self.report(
                RuleId::AnalysisLimit,
                cx.src.orig(node.byte_range()),
                format!("syntax nested more than {MAX_TREE_DEPTH} levels deep"),
            );
            return;
        }
        self.depth = if checked { depth + 1 } else { depth };
        match task {
            Task::Visit {
                node,
                parent,
                stdin,
            } => self.visit(cx, node, parent, stdin, tasks),
            Task::Tail {
                node,
                stdin,
                input,
                files,
            } => self.tail(cx, node, stdin, input, &files, tasks),
            Task::Heredoc { node, owner } => self.heredoc(node, owner, tasks),
            Task::Children {
                cursor,
                parent,
                stdin,
                kind,
            } => next_child(cursor, parent, stdin, kind, depth, tasks),
        }
    }

    fn visit<'t>(
        &mut self,
        cx: Cx<'_, '_>,
        node: Node<'t>,
        parent: Option<Node<'t>>,
        stdin: Stdin<'t>,
        tasks: &mut Tasks<'t>,
    ) {
        match node.kind() {
            "command" => {
                self.command(cx, node, stdin, &[]);
                self.command_parts(node, tasks);
            }
            "pipeline" => self.pipeline(node, stdin, tasks),
            "redirected_statement" => self.redirected(cx, node, stdin, tasks),
            "file_redirect" => {
                self.file_redirect(cx, node);
                self.children(node, Stdin::Opaque, tasks);
            }
            "function_definition" => {
                self.fork_bomb(cx, node);
                self.define_function(cx, node);
                self.children(node, Stdin::Opaque, tasks);
            }
            "variable_assignment" => {
                let standalone = parent.is_none_or(|p| p.kind() != "command");
                self.assignment(cx, node, standalone);
                self.children(node, Stdin::Opaque, tasks);
            }
            "unset_command" => {
                self.unset(cx, node);
                self.unset_subscripts(cx, node);
                self.children(node, Stdin::Opaque, tasks);
            }
            "command_substitution" | "process_substitution" => {
                self.substitution(cx, node);
                let inner = match stdin {
                    Stdin::Inherited => Stdin::Inherited,
                    _ => Stdin::Opaque,
                };
                self.children(node, inner, tasks);
            }
            "expansion" => {
                self.expansion_operands(cx, node);
                self.prompt_expansion(cx, node);
                self.children(node, Stdin::Opaque, tasks);
            }
            "arithmetic_expansion" | "c_style_for_statement" => {
                self.arithmetic(cx, node);
                self.children(node, stdin, tasks);
            }
            "compound_statement" if cx.src.text[node.byte_range()].starts_with("((") => {
                self.arithmetic(cx, node);
                self.children(node, stdin, tasks);
            }
            "test_command" => {
                self.test_arithmetic(cx, node);
                self.children(node, stdin, tasks);
            }
            "subscript" if parent.is_some_and(|p| p.kind() == "expansion") => {
                self.subscript(cx, node);
                self.children(node, stdin, tasks);
            }
            "declaration_command" => {
                self.declaration(cx, node);
                self.children(node, stdin, tasks);
            }
            "for_statement" => {
                self.loop_variable(cx, node);
                self.children(node, stdin, tasks);
            }
            "heredoc_body" => {
                let quoted = parent
                    .is_some_and(|redirect| crate::word::heredoc_is_quoted(&cx.src.text, redirect));
                if !quoted {
                    self.heredoc_text(cx, node);
                }
                self.children(node, stdin, tasks);
            }
            "comment" => {}
            _ => self.children(node, stdin, tasks),
        }
    }

    /// Queues the named children of `node`, each with standard input `stdin`.
    fn children<'t>(&mut self, node: Node<'t>, stdin: Stdin<'t>, tasks: &mut Tasks<'t>) {
        self.queue_children(node, stdin, Children::Plain, tasks);
    }

    /// Queues the parts of a command node: arguments (for substitutions inside them),
    /// assignments, redirects.
    fn command_parts<'t>(&mut self, node: Node<'t>, tasks: &mut Tasks<'t>) {
        self.queue_children(node, Stdin::Opaque, Children::CommandParts, tasks);
    }

    fn pipeline<'t>(&mut self, node: Node<'t>, stdin: Stdin<'t>, tasks: &mut Tasks<'t>) {
        self.queue_children(node, stdin, Children::Stages { index: 0 }, tasks);
    }

    fn queue_children<'t>(
        &mut self,
        node: Node<'t>,
        stdin: Stdin<'t>,
        kind: Children<'t>,
        tasks: &mut Tasks<'t>,
    ) {
        let mut cursor = node.walk();
        if cursor.goto_first_child() && (cursor.node().is_named() || next_named(&mut cursor)) {
            let children = Task::Children {
                cursor,
                parent: node,
                stdin,
                kind,
            };
            tasks.push((children, self.depth));
        }
    }

    fn redirected<'t>(
        &mut self,
        cx: Cx<'_, '_>,
        node: Node<'t>,
        stdin: Stdin<'t>,
        tasks: &mut Tasks<'t>,
    ) {
        let mut body = None;
        let mut redirects = Vec::new();
        let mut input = None;
        for (field, child) in fields(node) {
            match field {
                Some("body") => body = Some(child),
                Some("redirect") => {
                    match child.kind() {
                        "herestring_redirect" | "heredoc_redirect" => {
                            input = Some(Stdin::Here(child))
                        }
                        "file_redirect" if syntax::reads_file(&cx.src.text, child) => {
                            input = Some(Stdin::Opaque)
                        }
                        _ => {}
                    }
                    redirects.push(child);
                }
                _ => {}
            }
        }
        if let Some(body) = body {
            let files: Rc<[Node<'t>]> = redirects
                .iter()
                .copied()
                .filter(|r| r.kind() == "file_redirect")
                .collect();
            let tail = Task::Tail {
                node: body,
                stdin,
                input,
                files,
            };
            tasks.push((tail, self.depth));
        }
        self.queue_children(
            node,
            Stdin::Opaque,
            Children::Redirects { owner: body },
            tasks,
        );
    }

    /// Visits `node`, applying a statement's redirections to the command they belong to: bash
    /// binds `a | b <<EOF` and `a && b > f` to `b`, where tree-sitter puts them on the whole
    /// pipeline or list.
    fn tail<'t>(
        &mut self,
        cx: Cx<'_, '_>,
        node: Node<'t>,
        stdin: Stdin<'t>,
        input: Option<Stdin<'t>>,
        files: &Rc<[Node<'t>]>,
        tasks: &mut Tasks<'t>,
    ) {
        match node.kind() {
            "command" => {
                self.command(cx, node, input.unwrap_or(stdin), files);
                self.command_parts(node, tasks);
            }
            "pipeline" | "list" => {
                let piped = node.kind() == "pipeline";
                let children = named_children(node);
                let mut stage_input = stdin;
                for (i, child) in children.iter().enumerate() {
                    let task = if i + 1 == children.len() {
                        Task::Tail {
                            node: *child,
                            stdin: stage_input,
                            input,
                            files: Rc::clone(files),
                        }
                    } else {
                        Task::Visit {
                            node: *child,
                            parent: Some(node),
                            stdin: stage_input,
                        }
                    };
                    tasks.push((task, self.depth));
                    if piped {
                        stage_input = Stdin::Pipe {
                            from: *child,
                            here: None,
                            pipeline: Some((node, i)),
                        };
                    }
                }
            }
            _ => {
                let visit = Task::Visit {
                    node,
                    parent: None,
                    stdin: input.unwrap_or(stdin),
                };
                tasks.push((visit, self.depth));
            }
        }
    }

    /// A heredoc redirect: its body's substitutions, and commands written after the
    /// delimiter on the same line (`cat <<EOF | sh`), which read `owner`'s output.
    fn heredoc<'t>(&mut self, node: Node<'t>, owner: Node<'t>, tasks: &mut Tasks<'t>) {
        for child in named_children(node) {
            let stdin = match child.kind() {
                "pipeline" => Stdin::Pipe {
                    from: owner,
                    here: Some(node),
                    pipeline: None,
                },
                _ => Stdin::Opaque,
            };
            let visit = Task::Visit {
                node: child,
                parent: Some(node),
                stdin,
            };
            tasks.push((visit, self.depth));
        }
    }
}

/// Runs a [`Task::Children`]: queues the child `cursor` is on, then the task for the rest.
fn next_child<'t>(
    mut cursor: TreeCursor<'t>,
    parent: Node<'t>,
    stdin: Stdin<'t>,
    kind: Children<'t>,
    depth: usize,
    tasks: &mut Tasks<'t>,
) {
    let child = cursor.node();
    let visit = |stdin| Task::Visit {
        node: child,
        parent: Some(parent),
        stdin,
    };
    let (task, rest) = match kind {
        Children::Plain => (Some(visit(stdin)), (stdin, kind)),
        Children::CommandParts if child.kind() == "heredoc_redirect" => {
            let heredoc = Task::Heredoc {
                node: child,
                owner: parent,
            };
            (Some(heredoc), (stdin, kind))
        }
        Children::CommandParts => (Some(visit(Stdin::Opaque)), (stdin, kind)),
        Children::Stages { index } => {
            let next = Stdin::Pipe {
                from: child,
                here: None,
                pipeline: Some((parent, index)),
            };
            (
                Some(visit(stdin)),
                (next, Children::Stages { index: index + 1 }),
            )
        }
        Children::Redirects { .. } if cursor.field_name() != Some("redirect") => {
            (None, (stdin, kind))
        }
        Children::Redirects { owner: Some(owner) } if child.kind() == "heredoc_redirect" => {
            let heredoc = Task::Heredoc { node: child, owner };
            (Some(heredoc), (stdin, kind))
        }
        Children::Redirects { .. } => (Some(visit(Stdin::Opaque)), (stdin, kind)),
    };
    tasks.extend(task.map(|task| (task, depth)));
    if next_named(&mut cursor) {
        let (stdin, kind) = rest;
        let more = Task::Children {
            cursor,
            parent,
            stdin,
            kind,
        };
        tasks.push((more, depth));
    }
}

/// Moves `cursor` to its next named sibling; false when there is none.
fn next_named(cursor: &mut TreeCursor<'_>) -> bool {
    while cursor.goto_next_sibling() {
        if cursor.node().is_named() {
            return true;
        }
    }
    false
}

/// Whether `text` may define a function: every definition has `function` or `(` and `)` with
/// only blanks between them (`f()`, `f ( )`).
fn defines_functions(text: &str) -> bool {
    text.contains("function")
        || text.match_indices('(').any(|(at, _)| {
            text[at + 1..]
                .trim_start_matches([' ', '\t', '\n'])
                .starts_with(')')
        })
}
