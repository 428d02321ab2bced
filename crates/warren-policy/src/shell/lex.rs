//! A shell command splitter: quote-, escape-, substitution- and heredoc-aware. It does not run
//! or expand anything; it finds every simple command (segment), its words and its redirections,
//! including the commands hidden in `$(...)`, backticks, `<(...)` and unquoted heredoc bodies.

/// One word after quote removal. Expansions are not performed; `dynamic` says one was present.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The literal text after quote removal (`$VAR` kept as written).
    pub text: String,
    /// Contains a parameter expansion, command substitution or arithmetic expansion.
    pub dynamic: bool,
    /// Contains an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// Some part of the word was quoted.
    pub quoted: bool,
    /// Contains an unquoted brace expansion (`{a,b}`, `{1..3}`): one word becomes several.
    pub brace: bool,
}

/// What a redirection does with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`: reads the target.
    Read,
    /// `>`, `>|`, `&>`: writes (truncates) the target.
    Write,
    /// `>>`, `&>>`: appends to the target.
    Append,
    /// `<>`: opens the target read-write.
    ReadWrite,
    /// `>&N`, `<&N`, `N>&-`: duplicates a descriptor; the target is not a path.
    Dup,
    /// `<<` / `<<-`: the target is a heredoc delimiter, not a path.
    HereDoc,
    /// `<<<`: the target is a string, not a path.
    HereString,
}

/// One redirection of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The kind of redirection.
    pub kind: RedirectKind,
    /// The target word.
    pub target: Word,
}

/// One simple command: its words (assignments and command name included) and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segment {
    /// Words in order.
    pub words: Vec<Word>,
    /// Redirections in order.
    pub redirects: Vec<Redirect>,
    /// Its standard input comes from a pipe (`a | b`: true for `b`).
    pub after_pipe: bool,
    /// It came from a command or process substitution or a heredoc body.
    pub nested: bool,
}

/// A parsed command line: every segment, nested ones included.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    /// Segments in source order (nested segments follow the segment that contains them).
    pub segments: Vec<Segment>,
    /// A segment was sent to the background with `&`.
    pub background: bool,
    /// An arithmetic context names a variable (`$((n))`, `${a[i]}`): bash evaluates the
    /// variable's value as an expression, and a value like `a[$(cmd)]` runs `cmd`.
    pub arithmetic: bool,
}

/// A command line that cannot be split safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse shell command at byte {offset}: {message}")]
pub struct LexError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    expand: bool,
}

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    src: &'a str,
    script: Script,
    current: Segment,
    nested_out: Vec<Segment>,
    heredocs: Vec<PendingHeredoc>,
    depth: usize,
}

const MAX_NESTING: usize = 16;

/// Splits `src` into segments.
pub fn parse(src: &str) -> Result<Script, LexError> {
    parse_nested(src, 0)
}

fn parse_nested(src: &str, depth: usize) -> Result<Script, LexError> {
    if depth > MAX_NESTING {
        return Err(LexError {
            offset: 0,
            message: "substitutions nested too deeply".into(),
        });
    }
    let mut lx = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        src,
        script: Script::default(),
        current: Segment::default(),
        nested_out: Vec::new(),
        heredocs: Vec::new(),
        depth,
    };
    lx.run()?;
    Ok(lx.script)
}

impl Lexer<'_> {
    fn peek(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn err<T>(&self, message: &str) -> Result<T, LexError> {
        let offset = self.chars[..self.pos.min(self.chars.len())]
            .iter()
            .map(|c| c.len_utf8())
            .sum();
        let _ = self.src;
        Err(LexError {
            offset,
            message: message.to_string(),
        })
    }

    fn end_segment(&mut self, next_after_pipe: bool) {
        let seg = std::mem::take(&mut self.current);
        if !seg.words.is_empty() || !seg.redirects.is_empty() {
            self.script.segments.push(seg);
        }
        self.script.segments.append(&mut self.nested_out);
        self.current.after_pipe = next_after_pipe;
    }

    fn run(&mut self) -> Result<(), LexError> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    self.end_segment(false);
                    self.read_heredoc_bodies()?;
                }
                '#' => {
                    while let Some(c) = self.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                ';' | '(' | ')' => {
                    self.pos += 1;
                    self.end_segment(false);
                }
                '|' => {
                    let pipe = !matches!(self.peek(1), Some('|'));
                    self.pos += if pipe && self.peek(1) != Some('&') {
                        1
                    } else {
                        2
                    };
                    self.end_segment(pipe);
                }
                '&' => match self.peek(1) {
                    Some('>') => self.redirect()?,
                    Some('&') => {
                        self.pos += 2;
                        self.end_segment(false);
                    }
                    _ => {
                        self.pos += 1;
                        self.script.background = true;
                        self.end_segment(false);
                    }
                },
                '<' | '>' => self.redirect()?,
                _ => {
                    let start = self.pos;
                    let w = self.read_word()?;
                    // `2>file`: a word of digits directly followed by a redirection is an fd.
                    let is_fd = !w.quoted
                        && !w.text.is_empty()
                        && w.text.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(0), Some('<' | '>'))
                        && self.pos > start;
                    if !is_fd {
                        self.current.words.push(w);
                    }
                }
            }
        }
        self.end_segment(false);
        Ok(())
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn redirect(&mut self) -> Result<(), LexError> {
        let c0 = self.peek(0);
        let c1 = self.peek(1);
        let c2 = self.peek(2);
        let (kind, len) = match (c0, c1, c2) {
            (Some('&'), Some('>'), Some('>')) => (RedirectKind::Append, 3),
            (Some('&'), Some('>'), _) => (RedirectKind::Write, 2),
            (Some('<'), Some('<'), Some('<')) => (RedirectKind::HereString, 3),
            (Some('<'), Some('<'), _) => (RedirectKind::HereDoc, 2),
            (Some('<'), Some('>'), _) => (RedirectKind::ReadWrite, 2),
            (Some('<'), Some('&'), _) => (RedirectKind::Dup, 2),
            (Some('<'), Some('('), _) | (Some('>'), Some('('), _) => {
                self.pos += 1;
                let inner = self.read_balanced_parens()?;
                self.push_nested(&inner)?;
                self.current.words.push(Word {
                    text: String::new(),
                    dynamic: true,
                    ..Word::default()
                });
                return Ok(());
            }
            (Some('<'), _, _) => (RedirectKind::Read, 1),
            (Some('>'), Some('>'), _) => (RedirectKind::Append, 2),
            (Some('>'), Some('|'), _) => (RedirectKind::Write, 2),
            (Some('>'), Some('&'), _) => (RedirectKind::Dup, 2),
            _ => (RedirectKind::Write, 1),
        };
        self.pos += len;
        let mut strip_tabs = false;
        if kind == RedirectKind::HereDoc && self.peek(0) == Some('-') {
            strip_tabs = true;
            self.pos += 1;
        }
        self.skip_blanks();
        if self.peek(0).is_none() || matches!(self.peek(0), Some('\n' | ';' | '|' | '&')) {
            return self.err("redirection without a target");
        }
        let target = self.read_word()?;
        let kind = match kind {
            // `>&word` where word is not a descriptor number writes to a file, like `&>`.
            RedirectKind::Dup
                if !(target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit())) =>
            {
                RedirectKind::Write
            }
            k => k,
        };
        if kind == RedirectKind::HereDoc {
            self.heredocs.push(PendingHeredoc {
                delimiter: target.text.clone(),
                strip_tabs,
                expand: !target.quoted,
            });
        }
        self.current.redirects.push(Redirect { kind, target });
        Ok(())
    }

    fn push_nested(&mut self, inner: &str) -> Result<(), LexError> {
        let sub = parse_nested(inner, self.depth + 1)?;
        self.script.background |= sub.background;
        self.script.arithmetic |= sub.arithmetic;
        for mut seg in sub.segments {
            seg.nested = true;
            self.nested_out.push(seg);
        }
        Ok(())
    }

    /// Reads from just after `(` to the matching `)`, quote-aware; returns the inside.
    fn read_balanced_parens(&mut self) -> Result<String, LexError> {
        // self.pos is at '('.
        self.pos += 1;
        let start = self.pos;
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.pos += 2,
                '`' => {
                    self.read_backticks()?;
                }
                '\'' => self.skip_single_quoted()?,
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        if c == '\\' {
                            self.pos += 2;
                        } else if c == '"' {
                            break;
                        } else {
                            self.pos += 1;
                        }
                    }
                    if self.peek(0).is_none() {
                        return self.err("unterminated double quote");
                    }
                    self.pos += 1;
                }
                '(' => {
                    depth += 1;
                    self.pos += 1;
                }
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        let inner: String = self.chars[start..self.pos].iter().collect();
                        self.pos += 1;
                        return Ok(inner);
                    }
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
        self.err("unterminated `(`")
    }

    fn read_backticks(&mut self) -> Result<String, LexError> {
        // self.pos is at '`'.
        self.pos += 1;
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    if let Some(n) = self.peek(1) {
                        if !matches!(n, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(n);
                    }
                    self.pos += 2;
                }
                '`' => {
                    self.pos += 1;
                    return Ok(inner);
                }
                _ => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        self.err("unterminated backquote")
    }

    /// Handles `$...` at the current position (which is at `$`), appending to `w`.
    fn dollar(&mut self, w: &mut Word, in_dquote: bool) -> Result<(), LexError> {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                self.pos += 1;
                let inner = self.read_balanced_parens()?;
                if inner.chars().any(|c| c.is_ascii_alphabetic() || c == '_') {
                    self.script.arithmetic = true;
                }
                // Arithmetic may itself contain substitutions.
                if inner.contains("$(") || inner.contains('`') {
                    self.push_nested(inner.trim_start_matches('(').trim_end_matches(')'))?;
                }
                w.text.push_str("$((...))");
                w.dynamic = true;
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.read_balanced_parens()?;
                self.push_nested(&inner)?;
                w.text.push_str("$(...)");
                w.dynamic = true;
            }
            Some('{') => {
                let start = self.pos;
                self.pos += 2;
                self.param_expansion(in_dquote)?;
                let text: String = self.chars[start..self.pos].iter().collect();
                w.text.push_str(&text);
                w.dynamic = true;
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                w.text.push('$');
                self.pos += 1;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        w.text.push(self.chars[self.pos]);
                        self.pos += 1;
                    }
                } else {
                    w.text.push(c);
                    self.pos += 1;
                }
                w.dynamic = true;
            }
            _ => {
                w.text.push('$');
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// Skips a `'...'` (the position is at its opening quote): nothing inside is special.
    fn skip_single_quoted(&mut self) -> Result<(), LexError> {
        self.pos += 1;
        while self.peek(0).is_some_and(|c| c != '\'') {
            self.pos += 1;
        }
        if self.peek(0).is_none() {
            return self.err("unterminated single quote");
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads the rest of a `${...}` (the position is just after `${`) up to its `}`, as
    /// both shells find its end: backslashes, quotes, nested `${...}`, and the command
    /// substitutions inside, which run when the expansion does and are parsed as commands.
    /// What the two shells read differently (a bare brace, single quotes inside a
    /// double-quoted `${...}`) is refused.
    fn param_expansion(&mut self, in_dquote: bool) -> Result<(), LexError> {
        while let Some(c) = self.peek(0) {
            match c {
                '}' => {
                    self.pos += 1;
                    return Ok(());
                }
                '\\' => self.pos += 2,
                '{' => return self.err("a `{` inside `${...}` is read differently by /bin/sh (dash) and bash"),
                '[' => {
                    self.script.arithmetic = true;
                    self.pos += 1;
                }
                '\'' if in_dquote => {
                    return self.err("a single quote inside a double-quoted `${...}` is read differently by /bin/sh (dash) and bash")
                }
                '\'' => self.skip_single_quoted()?,
                '"' => {
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            None => return self.err("unterminated double quote"),
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => self.pos += 2,
                            Some('$' | '`') => self.substitution_in(true)?,
                            Some(_) => self.pos += 1,
                        }
                    }
                }
                '$' | '`' => self.substitution_in(in_dquote)?,
                _ => self.pos += 1,
            }
        }
        self.err("unterminated `${`")
    }

    /// A `$...` or backquote met while scanning: its commands are parsed as nested segments.
    fn substitution_in(&mut self, in_dquote: bool) -> Result<(), LexError> {
        let mut scratch = Word::default();
        if self.peek(0) == Some('`') {
            let inner = self.read_backticks()?;
            self.push_nested(&inner)
        } else if self.peek(1) == Some('\'') {
            self.err("`$'...'` quoting is read differently by /bin/sh (dash) and bash")
        } else if self.peek(1) == Some('"') {
            self.pos += 1;
            Ok(())
        } else {
            self.dollar(&mut scratch, in_dquote)
        }
    }

    fn read_word(&mut self) -> Result<Word, LexError> {
        let mut w = Word::default();
        // Unquoted `{` seen, and a `,` or `..` after it: a `}` then makes a brace expansion.
        let mut brace_open = false;
        let mut brace_sep = false;
        while let Some(c) = self.peek(0) {
            match c {
                '{' | '}' | ',' | '.' => {
                    match c {
                        '{' => {
                            brace_open = true;
                            brace_sep = false;
                        }
                        '}' if brace_open && brace_sep => w.brace = true,
                        ',' if brace_open => brace_sep = true,
                        '.' if brace_open && self.peek(1) == Some('.') => brace_sep = true,
                        _ => {}
                    }
                    w.text.push(c);
                    self.pos += 1;
                }
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(n) => {
                            w.text.push(n);
                            w.quoted = true;
                        }
                        // A backslash ending the line stays itself (bash and dash agree).
                        None => w.text.push('\\'),
                    }
                    self.pos += 2;
                }
                '\'' => {
                    self.pos += 1;
                    w.quoted = true;
                    loop {
                        match self.peek(0) {
                            None => return self.err("unterminated single quote"),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(c) => {
                                w.text.push(c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' if self.peek(1) == Some('\'') => {
                    // dash (Debian's /bin/sh) reads `$'a\'` as `$` and a quoted `a\`; bash
                    // decodes escapes and lets `\'` go on. Words and even commands differ.
                    return self.err(
                        "`$'...'` quoting is read differently by /bin/sh (dash) and bash; quote with '...' or \"...\" instead",
                    );
                }
                '$' if self.peek(1) == Some('"') => {
                    // `$"..."`: dash keeps the `$`, bash translates the string. Either way
                    // the word is only known when the shell runs.
                    w.text.push('$');
                    w.dynamic = true;
                    self.pos += 1;
                }
                '"' => {
                    self.pos += 1;
                    w.quoted = true;
                    loop {
                        match self.peek(0) {
                            None => return self.err("unterminated double quote"),
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => {
                                match self.peek(1) {
                                    Some(n @ ('$' | '`' | '"' | '\\')) => w.text.push(n),
                                    Some('\n') => {}
                                    Some(n) => {
                                        w.text.push('\\');
                                        w.text.push(n);
                                    }
                                    None => return self.err("unterminated double quote"),
                                }
                                self.pos += 2;
                            }
                            Some('$') => self.dollar(&mut w, true)?,
                            Some('`') => {
                                let inner = self.read_backticks()?;
                                self.push_nested(&inner)?;
                                w.text.push_str("`...`");
                                w.dynamic = true;
                            }
                            Some(c) => {
                                w.text.push(c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' => self.dollar(&mut w, false)?,
                '`' => {
                    let inner = self.read_backticks()?;
                    self.push_nested(&inner)?;
                    w.text.push_str("`...`");
                    w.dynamic = true;
                }
                '*' | '?' | '[' => {
                    w.glob = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(w)
    }

    fn read_heredoc_bodies(&mut self) -> Result<(), LexError> {
        let pending = std::mem::take(&mut self.heredocs);
        for h in pending {
            let mut body = String::new();
            loop {
                if self.peek(0).is_none() {
                    break;
                }
                let mut line = String::new();
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let cmp = if h.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if cmp == h.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if h.expand {
                self.scan_expanding_text(&body)?;
                let mut nested = std::mem::take(&mut self.nested_out);
                self.script.segments.append(&mut nested);
            }
        }
        Ok(())
    }

    /// Finds the substitutions of an unquoted heredoc body and parses them as commands.
    fn scan_expanding_text(&mut self, body: &str) -> Result<(), LexError> {
        let mut inner = Lexer {
            chars: body.chars().collect(),
            pos: 0,
            src: body,
            script: Script::default(),
            current: Segment::default(),
            nested_out: Vec::new(),
            heredocs: Vec::new(),
            depth: self.depth,
        };
        let mut scratch = Word::default();
        while let Some(c) = inner.peek(0) {
            match c {
                '\\' => inner.pos += 2,
                '$' => inner.dollar(&mut scratch, true)?,
                '`' => {
                    let text = inner.read_backticks()?;
                    inner.push_nested(&text)?;
                }
                _ => inner.pos += 1,
            }
        }
        self.nested_out.append(&mut inner.nested_out);
        self.script.background |= inner.script.background;
        self.script.arithmetic |= inner.script.arithmetic;
        Ok(())
    }
}
