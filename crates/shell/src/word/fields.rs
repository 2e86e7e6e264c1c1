//! Word splitting: the fields a word's expansions split it into (`"$@"`, `"${a[@]}"`,
//! unquoted `$X` holding blanks), from values, arrays and positional parameters.

use std::collections::HashMap;

use super::{FIELD, Field, Sink, TextSink, Value};
use crate::limits::MAX_SPLIT_WORDS;
use crate::source::Positional;

impl<'s> TextSink<'s> {
    /// Substitutes a scalar value (of an array, its first element).
    pub(super) fn value(&mut self, (text, unknown, any): Value<'_>) {
        if self.budget.exhausted() {
            // The analysis stops: do not scan more values.
            self.mark_unknown();
            return;
        }
        let text = text.split(FIELD).next().unwrap_or_default();
        self.substitute(text, unknown, any);
    }

    /// Substitutes `text`, split on `IFS` outside double quotes.
    pub(super) fn substitute(&mut self, text: &str, unknown: bool, any: bool) {
        if !self.fits(text.len()) {
            return;
        }
        let ifs = self.ifs;
        if self.quoted || ifs.is_empty() || !text.contains(|c| ifs.contains(c)) {
            self.lit(text, 0..0);
        } else {
            for (i, piece) in text.split(|c| ifs.contains(c)).enumerate() {
                if i > 0 {
                    self.cut();
                }
                self.lit(piece, 0..0);
            }
        }
        self.mark_any(any);
        if unknown {
            self.mark_unknown();
        }
    }

    /// Substitutes a list of values (`"$@"`, `"${a[@]}"`): one word each, unless `joined`
    /// (`"$*"`) inside double quotes.
    pub(super) fn substitute_all<'v>(
        &mut self,
        values: impl Iterator<Item = Value<'v>>,
        joined: bool,
    ) {
        for (i, (text, unknown, any)) in values.enumerate() {
            if i > 0 {
                if joined && self.quoted {
                    self.lit(" ", 0..0);
                } else {
                    self.cut();
                }
            }
            self.substitute(text, unknown, any);
        }
    }

    /// Ends the current field: what follows is another word. In `text` the fields are
    /// separated by one blank.
    fn cut(&mut self) {
        if self.fields.len() > MAX_SPLIT_WORDS {
            // Past the limit the command is not analysed (see `MAX_SPLIT_WORDS`): stop
            // recording fields.
            self.text.push(' ');
            return;
        }
        self.field.range.end = self.text.len();
        self.text.push(' ');
        let next = Field {
            range: self.text.len()..self.text.len(),
            unknown: false,
            any: false,
        };
        self.fields.push(std::mem::replace(&mut self.field, next));
    }

    /// The fields of a split word; empty when it was not split.
    pub(super) fn finish_fields(&mut self) -> Vec<Field> {
        if self.fields.is_empty() {
            return Vec::new();
        }
        self.field.range.end = self.text.len();
        let mut fields = std::mem::take(&mut self.fields);
        fields.push(self.field.clone());
        fields
    }

    /// `$@`/`$*`: the parameters `set --` gave this text, else its `sh -c` arguments.
    pub(super) fn positional(&mut self, joined: bool) {
        let vars: &'s HashMap<String, Option<String>> = self.vars;
        match vars.get("@") {
            Some(Some(list)) => {
                let values = list.split(FIELD).filter(|v| !v.is_empty());
                self.substitute_all(values.map(|v| (v, false, false)), joined);
            }
            Some(None) => self.mark_unknown(),
            None => {
                if self.args.len() < 2 {
                    self.mark_unknown();
                }
                let bytes: usize = self.args.iter().skip(1).map(|a| a.text.len() + 1).sum();
                if !self.fits(bytes) {
                    return;
                }
                let args: &'s [Positional] = self.args;
                let values = args
                    .iter()
                    .skip(1)
                    .map(|a| (a.text.as_str(), a.unknown, a.any));
                self.substitute_all(values, joined);
            }
        }
    }
}

/// Whether `text` is a variable name (or a positional parameter).
pub(crate) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => text.chars().all(|c| c.is_ascii_digit()),
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        _ => false,
    }
}
