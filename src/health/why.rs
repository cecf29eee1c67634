//! Explanations: what an exit code means, and one clean line from untrusted text.

/// What a container's exit code says, as an operator reads it.
pub fn exit_code_meaning(code: i64, reason: &str) -> String {
    match code {
        0 => "exited successfully (and was restarted: check the restart policy or the command)".into(),
        1 => "application error".into(),
        2 => "misuse of a shell command or bad arguments".into(),
        126 => "the command cannot be executed (permissions, or not an executable)".into(),
        127 => "command not found (check the image's entrypoint and command)".into(),
        137 if reason == "OOMKilled" => "SIGKILL: out of memory, the container went over its memory limit".into(),
        137 => "SIGKILL: killed, by the out-of-memory killer or for not stopping within its grace period".into(),
        143 => "SIGTERM: told to stop, e.g. killed after failing its liveness probe".into(),
        139 => "SIGSEGV: segmentation fault".into(),
        134 => "SIGABRT: aborted".into(),
        130 => "SIGINT: interrupted".into(),
        255 => "exit status out of range, or a fatal error before the application started".into(),
        c if c > 128 && c < 160 => format!("killed by signal {}", c - 128),
        _ => "application error".into(),
    }
}

/// One line of at most `max` characters, control characters (terminal escapes, line breaks)
/// turned into spaces: cluster text is untrusted.
pub fn clean_line(s: &str, max: usize) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let flat = flat.trim();
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    } else {
        flat.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_have_meanings() {
        assert!(exit_code_meaning(137, "OOMKilled").contains("out of memory"));
        assert!(exit_code_meaning(143, "Error").contains("liveness probe"));
        assert_eq!(exit_code_meaning(129, "Error"), "killed by signal 1");
    }

    #[test]
    fn untrusted_text_becomes_one_clean_line() {
        assert_eq!(clean_line("a\nb\x1b[31mc\r\n", 100), "a b [31mc");
        assert_eq!(clean_line("abcdef", 4), "abc…");
    }
}
