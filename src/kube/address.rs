//! The address of an API server, as a user types it.

use crate::error::AddressError;

/// Turns `https://k3s.lan:6443`, `k3s.lan`, `192.0.2.10`, `[2001:db8::1]`, `2001:db8::1` or
/// `host:port` into `https://host:port`. `default_port` applies when the address names none.
/// Plain `http://` is refused: the API server speaks HTTPS only.
pub fn parse_address(input: &str, default_port: u16) -> Result<String, AddressError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(AddressError::Empty);
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control() || !c.is_ascii()) {
        return Err(AddressError::Characters { text: s.to_string() });
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("http://") {
        return Err(AddressError::PlainHttp { text: s.to_string() });
    }
    let (authority, path) = if lower.starts_with("https://") {
        let rest = &s["https://".len()..];
        match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        }
    } else if let Some(i) = s.find("://") {
        return Err(AddressError::Scheme { scheme: s[..i].to_string(), text: s.to_string() });
    } else if s.contains('/') {
        return Err(AddressError::PathWithoutScheme { text: s.to_string() });
    } else {
        (s, "")
    };
    if path.contains(['?', '#']) {
        return Err(AddressError::QueryOrFragment { text: s.to_string() });
    }
    let (host, port) = split_host_port(authority, s)?;
    let port = port.unwrap_or(default_port);
    if port == 0 {
        return Err(AddressError::PortZero { text: s.to_string() });
    }
    let host = if host.contains(':') { format!("[{host}]") } else { host.to_string() };
    let url = format!("https://{host}:{port}{path}");
    url.parse::<http::Uri>().map_err(|source| AddressError::Invalid { text: s.to_string(), source })?;
    Ok(url)
}

/// Splits `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal.
fn split_host_port<'a>(authority: &'a str, whole: &str) -> Result<(&'a str, Option<u16>), AddressError> {
    let text = || whole.to_string();
    let bad_port = |p: &str| AddressError::NotAPort { port: p.to_string(), text: text() };
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| AddressError::Unclosed { text: text() })?;
        if host.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(AddressError::NotIpv6 { host: host.to_string(), text: text() });
        }
        return match after {
            "" => Ok((host, None)),
            p if p.starts_with(':') => Ok((host, Some(p[1..].parse().map_err(|_| bad_port(&p[1..]))?))),
            _ => Err(AddressError::AfterBracket { text: text() }),
        };
    }
    if authority.matches(':').count() > 1 {
        // A bare IPv6 literal cannot carry a port: brackets are needed for that.
        return match authority.parse::<std::net::Ipv6Addr>() {
            Ok(_) => Ok((authority, None)),
            Err(_) => Err(AddressError::BareIpv6WithPort { text: text() }),
        };
    }
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, Some(p.parse().map_err(|_| bad_port(p))?)),
        None => (authority, None),
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '@') {
        return Err(AddressError::NotAHost { text: text() });
    }
    Ok((host, port))
}

/// The host part of an `https://host:port` URL, without IPv6 brackets.
pub fn host_of(url: &str) -> String {
    let uri: http::Uri = match url.parse() {
        Ok(u) => u,
        Err(_) => return url.to_string(),
    };
    uri.host().unwrap_or("").trim_start_matches('[').trim_end_matches(']').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_by_fuzzing() {
        // A no-break space inside a path made an address that parsed differently a second time.
        let e = parse_address("https://uses$/usrfer?\u{a0}//", 6443).unwrap_err().to_string();
        assert!(e.starts_with("Not an address: "), "{e}");
        assert!(parse_address("https://rancher.lan/k8s/clusters/c-m-1?x", 6443).is_err());
        assert_eq!(
            parse_address("https://rancher.lan/k8s/clusters/c-m-1", 6443).unwrap(),
            "https://rancher.lan:6443/k8s/clusters/c-m-1"
        );
    }

    #[test]
    fn the_three_forms_and_ipv6() {
        assert_eq!(parse_address("https://k3s.lan:6443", 6443).unwrap(), "https://k3s.lan:6443");
        assert_eq!(parse_address("https://k3s.lan", 6443).unwrap(), "https://k3s.lan:6443");
        assert_eq!(parse_address("192.0.2.10", 6443).unwrap(), "https://192.0.2.10:6443");
        assert_eq!(parse_address("192.0.2.10", 16443).unwrap(), "https://192.0.2.10:16443");
        assert_eq!(parse_address("k3s.lan:7443", 6443).unwrap(), "https://k3s.lan:7443");
        assert_eq!(parse_address("[2001:db8::1]", 6443).unwrap(), "https://[2001:db8::1]:6443");
        assert_eq!(parse_address("[2001:db8::1]:443", 6443).unwrap(), "https://[2001:db8::1]:443");
        assert_eq!(parse_address("2001:db8::1", 6443).unwrap(), "https://[2001:db8::1]:6443");
        assert_eq!(parse_address("https://[::1]:8443/", 6443).unwrap(), "https://[::1]:8443");
        assert_eq!(
            parse_address("HTTPS://rancher.example/k8s/clusters/c-m-abc", 6443).unwrap(),
            "https://rancher.example:6443/k8s/clusters/c-m-abc"
        );
    }

    #[test]
    fn plain_http_and_nonsense_are_refused() {
        let e = parse_address("http://k3s.lan:6443", 6443).unwrap_err();
        assert!(e.to_string().starts_with("Plain http:// is refused"), "{e}");
        assert!(parse_address("", 6443).is_err());
        assert!(parse_address("k3s.lan:http", 6443).unwrap_err().to_string().contains("Not a port number"));
        assert!(parse_address("ftp://x", 6443).unwrap_err().to_string().contains("Unsupported scheme"));
        assert!(parse_address("[2001:db8::1", 6443).is_err());
        assert!(parse_address("[k3s.lan]:6443", 6443).is_err());
        assert!(parse_address("user@host", 6443).is_err());
        assert!(parse_address("host:0", 6443).is_err());
    }

    #[test]
    fn host_of_strips_brackets() {
        assert_eq!(host_of("https://[2001:db8::1]:6443"), "2001:db8::1");
        assert_eq!(host_of("https://k3s.lan:6443/x"), "k3s.lan");
    }
}
