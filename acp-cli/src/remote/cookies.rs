//! The cookies of one Streamable HTTP connection (R-NETC-6): what the server sets with
//! `Set-Cookie` goes back on every later request of the same connection as `Cookie`, so a
//! load balancer's sticky session keeps our requests on one server. Attributes (path,
//! domain, expiry) are not read: the jar lives as long as the connection, for one origin.

/// The most cookies kept; more are dropped (a server's bytes are not trusted to be few).
const MAX_COOKIES: usize = 32;

/// The most bytes of one `name=value`.
const MAX_COOKIE: usize = 4096;

/// See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Jar {
    /// `(name, value)` in the order first set.
    cookies: Vec<(String, String)>,
}

impl Jar {
    /// Takes one `Set-Cookie` header value: its `name=value` replaces a cookie of that name;
    /// an empty value removes it. Malformed or oversized values are ignored.
    pub(crate) fn set(&mut self, header: &str) {
        let pair = header.split(';').next().unwrap_or("").trim();
        let Some((name, value)) = pair.split_once('=') else {
            return;
        };
        let (name, value) = (name.trim(), value.trim());
        let fits = |text: &str| {
            text.bytes()
                .all(|b| b.is_ascii_graphic() && b != b';' && b != b',')
        };
        if name.is_empty() || pair.len() > MAX_COOKIE || !fits(name) || !fits(value) {
            return;
        }
        self.cookies.retain(|(kept, _)| kept != name);
        if !value.is_empty() && self.cookies.len() < MAX_COOKIES {
            self.cookies.push((name.to_owned(), value.to_owned()));
        }
    }

    /// The `Cookie` header value, or `None` when the jar is empty.
    pub(crate) fn header(&self) -> Option<String> {
        (!self.cookies.is_empty()).then(|| {
            self.cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    /// R-NETC-6: set cookies come back joined; a new value replaces, an empty one removes;
    /// attributes and malformed headers are ignored.
    #[test]
    fn cookies_come_back_as_set() {
        let mut jar = Jar::default();
        assert_eq!(jar.header(), None);
        jar.set("route=a1; Path=/; HttpOnly");
        jar.set("sid=x");
        jar.set("garbage");
        jar.set("=nameless");
        jar.set("bad name=1");
        assert_eq!(jar.header().as_deref(), Some("route=a1; sid=x"));
        jar.set("route=b2");
        assert_eq!(jar.header().as_deref(), Some("sid=x; route=b2"));
        jar.set("sid=; Max-Age=0");
        assert_eq!(jar.header().as_deref(), Some("route=b2"));
    }

    quickcheck! {
        /// R-NETC-6: any header value keeps the jar bounded, and its `Cookie` header one line
        /// of visible ASCII.
        fn any_set_cookie_keeps_the_jar_sane(headers: Vec<String>) -> bool {
            let mut jar = Jar::default();
            for header in &headers {
                jar.set(header);
            }
            jar.cookies.len() <= MAX_COOKIES
                && jar.header().is_none_or(|h| h.bytes().all(|b| b.is_ascii_graphic() || b == b' '))
        }
    }
}
