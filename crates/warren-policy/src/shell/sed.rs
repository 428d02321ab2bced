//! Just enough of sed's script language to find the commands that name files (`r`, `R`, `w`,
//! `W`, `s///w`) or run commands (`e`, `s///e`). Anything not understood counts as both.

/// `(names files, runs commands)` for `sed` with these arguments.
pub(crate) fn sed_effects(args: &[&str]) -> (bool, bool) {
    let mut scripts: Vec<&str> = Vec::new();
    let mut from_file = false;
    let mut sandboxed = false;
    let mut explicit = false;
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            operands.extend(&args[i + 1..]);
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (head, val) = match long.split_once('=') {
                Some((h, v)) => (h, Some(v)),
                None => (long, None),
            };
            match head {
                "expression" => {
                    explicit = true;
                    match val {
                        Some(v) => scripts.push(v),
                        None => {
                            i += 1;
                            scripts.extend(args.get(i).copied());
                        }
                    }
                }
                "file" => {
                    from_file = true;
                    if val.is_none() {
                        i += 1;
                    }
                }
                "sandbox" => sandboxed = true,
                "line-length" if val.is_none() => i += 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let letters: Vec<char> = a[1..].chars().collect();
            for (k, c) in letters.iter().enumerate() {
                let rest: String = letters[k + 1..].iter().collect();
                match c {
                    'e' | 'f' | 'l' => {
                        if *c == 'f' {
                            from_file = true;
                        }
                        if *c == 'e' {
                            explicit = true;
                        }
                        if rest.is_empty() {
                            i += 1;
                            if *c == 'e' {
                                scripts.extend(args.get(i).copied());
                            }
                        } else if *c == 'e' {
                            // The rest of the word is the script; keep it borrowed from `a`.
                            scripts.push(&a[a.len() - rest.len()..]);
                        }
                        break;
                    }
                    // `-i.bak`: the suffix is attached.
                    'i' => break,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        operands.push(a);
        i += 1;
    }
    if !explicit && !from_file {
        if let Some(first) = operands.first() {
            scripts.push(first);
        }
    }
    if sandboxed {
        return (false, false);
    }
    let mut io = from_file;
    let mut exec = from_file;
    for s in scripts {
        let (a, b) = scan(s);
        io |= a;
        exec |= b;
    }
    (io, exec)
}

/// Scans one script.
fn scan(s: &str) -> (bool, bool) {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let (mut io, mut exec) = (false, false);
    let to_eol = |i: &mut usize| {
        while *i < c.len() && c[*i] != '\n' {
            *i += 1;
        }
    };
    // Skips a delimited part starting after its opening delimiter; false when unterminated.
    let delimited = |i: &mut usize, d: char| -> bool {
        while *i < c.len() {
            if c[*i] == '\\' {
                *i += 2;
                continue;
            }
            if c[*i] == d {
                *i += 1;
                return true;
            }
            if c[*i] == '\n' {
                return false;
            }
            *i += 1;
        }
        false
    };
    let address = |i: &mut usize| -> bool {
        match c.get(*i) {
            Some(d) if d.is_ascii_digit() => {
                while c.get(*i).is_some_and(|d| d.is_ascii_digit() || *d == '~') {
                    *i += 1;
                }
            }
            Some('$') => *i += 1,
            Some('/') => {
                *i += 1;
                if !delimited(i, '/') {
                    return false;
                }
                while matches!(c.get(*i), Some('I' | 'M')) {
                    *i += 1;
                }
            }
            Some('\\') => {
                let Some(d) = c.get(*i + 1).copied() else {
                    return false;
                };
                *i += 2;
                if !delimited(i, d) {
                    return false;
                }
                while matches!(c.get(*i), Some('I' | 'M')) {
                    *i += 1;
                }
            }
            _ => {}
        }
        true
    };
    while i < c.len() {
        while i < c.len() && (c[i].is_whitespace() || c[i] == ';') {
            i += 1;
        }
        if i >= c.len() {
            break;
        }
        if !address(&mut i) {
            return (true, true);
        }
        if c.get(i) == Some(&',') {
            i += 1;
            if matches!(c.get(i), Some('+' | '~')) {
                i += 1;
            }
            if !address(&mut i) {
                return (true, true);
            }
        }
        while i < c.len() && (c[i] == ' ' || c[i] == '!') {
            i += 1;
        }
        let Some(cmd) = c.get(i).copied() else {
            break;
        };
        i += 1;
        match cmd {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'q' | 'Q' | 'l' | 'L' => {
                while c.get(i).is_some_and(|d| d.is_ascii_digit() || *d == ' ') {
                    i += 1;
                }
            }
            '#' | 'a' | 'i' | 'c' => {
                // Text (or a comment) to the end of the line, `\`-newline continues it.
                while i < c.len() && c[i] != '\n' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                while i < c.len() && c[i] != '\n' && c[i] != ';' {
                    i += 1;
                }
            }
            'r' | 'R' | 'w' | 'W' => {
                io = true;
                to_eol(&mut i);
            }
            'e' => {
                exec = true;
                to_eol(&mut i);
            }
            's' | 'y' => {
                let Some(d) = c.get(i).copied() else {
                    return (true, true);
                };
                if d == '\n' || d == '\\' {
                    return (true, true);
                }
                i += 1;
                if !delimited(&mut i, d) || !delimited(&mut i, d) {
                    return (true, true);
                }
                if cmd == 's' {
                    while let Some(f) = c.get(i).copied() {
                        match f {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                            d if d.is_ascii_digit() => i += 1,
                            'e' => {
                                exec = true;
                                i += 1;
                            }
                            'w' => {
                                io = true;
                                to_eol(&mut i);
                            }
                            ';' | '\n' | '}' | ' ' => break,
                            _ => return (true, true),
                        }
                    }
                }
            }
            _ => return (true, true),
        }
    }
    (io, exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        for (args, want) in [
            (&["s/a/b/g", "f"][..], (false, false)),
            (&["-n", "1,5p", "f"][..], (false, false)),
            (&["-e", "s/hello/world/", "-e", "/x/d"][..], (false, false)),
            (&["-i", "s/a/b/", "f"][..], (false, false)),
            (&["w /etc/x"][..], (true, false)),
            (&["1r /etc/passwd", "f"][..], (true, false)),
            (&["s/a/b/w /tmp/x", "f"][..], (true, false)),
            (&["s/a/id/e", "f"][..], (false, true)),
            (&["1e id", "f"][..], (false, true)),
            (&["-ne", "W out", "f"][..], (true, false)),
            (&["-f", "script.sed", "f"][..], (true, true)),
            (&["--sandbox", "w /etc/x"][..], (false, false)),
            (
                &["s/a/b/ ; $!N; /x/,/y/{ s|a|b|gw out\n}"][..],
                (true, false),
            ),
            (&["s/a/b/Q"][..], (true, true)),
        ] {
            assert_eq!(sed_effects(args), want, "{args:?}");
        }
    }
}
