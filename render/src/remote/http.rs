//! Fetching one remote file over HTTP(S), as kustomize's file loader does
//! (`FileLoader.httpClientGetContent` in `api/internal/loader/
//! fileloader.go`): a GET, any 2xx is the content. Unlike kustomize's
//! client (no timeout at all) the whole request is bounded by the fetch
//! timeout, and the body by the loader's file budget.

use std::time::Duration;

/// Why a GET gave no content.
#[derive(Debug)]
pub enum HttpError {
    /// The server answered with a status outside 2xx.
    Status(u16),
    /// No answer: the network, DNS, TLS, a timeout, a body over budget.
    Transport(String),
}

impl HttpError {
    /// kustomize's wording.
    pub fn describe(&self) -> String {
        match self {
            HttpError::Status(code) => format!("HTTP request failed: status code {code}"),
            HttpError::Transport(why) => why.clone(),
        }
    }

    /// The answer is the server's and Flux would get it too: a 4xx other
    /// than timeouts and rate limits.
    pub(crate) fn definitive(&self) -> bool {
        matches!(self, HttpError::Status(code) if (400..500).contains(code) && *code != 408 && *code != 429)
    }
}

/// An agent whose every connection, redirects included, goes only to
/// addresses [`forbidden`] allows. `status_errors`: a status outside 2xx
/// is an error (else the response is returned, for its headers).
fn agent(timeout: Duration, status_errors: bool) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(status_errors)
        .user_agent(concat!("conformance/", env!("CARGO_PKG_VERSION")))
        .build();
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::new(),
        NoLinkLocal(ureq::unversioned::resolver::DefaultResolver::default()),
    )
}

/// A response read whole: its status, the header that asks for
/// credentials (`WWW-Authenticate`), its body.
#[derive(Debug)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// `WWW-Authenticate`, when the server sent one.
    pub authenticate: Option<String>,
    /// The body, at most the limit asked for.
    pub body: Vec<u8>,
}

/// GETs `url` with `headers` within `timeout`, reading at most `limit`
/// bytes, whatever the status (an OCI registry's 401 names where to get
/// a token).
pub fn request(
    url: &str,
    headers: &[(&str, &str)],
    timeout: Duration,
    limit: u64,
) -> Result<Response, HttpError> {
    let mut req = agent(timeout, false).get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let response = req.call().map_err(|e| transport(url, timeout, e))?;
    let status = response.status().as_u16();
    let authenticate = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = read_body(url, response.into_body(), limit)?;
    Ok(Response {
        status,
        authenticate,
        body,
    })
}

fn transport(url: &str, timeout: Duration, e: ureq::Error) -> HttpError {
    match e {
        ureq::Error::StatusCode(code) => HttpError::Status(code),
        ureq::Error::Timeout(_) => HttpError::Transport(format!(
            "GET {url} did not finish within {} s",
            timeout.as_secs()
        )),
        other => HttpError::Transport(format!("GET {url}: {other}")),
    }
}

fn read_body(url: &str, mut body: ureq::Body, limit: u64) -> Result<Vec<u8>, HttpError> {
    body.with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => HttpError::Transport(format!(
                "GET {url}: the body exceeds {limit} bytes, the loader's budget for one file"
            )),
            other => HttpError::Transport(format!("GET {url}: {other}")),
        })
}

/// GETs `url` within `timeout`, reading at most `limit` bytes. Every
/// connection, redirects included, goes only to addresses
/// [`forbidden`] allows.
pub fn get(url: &str, timeout: Duration, limit: u64) -> Result<Vec<u8>, HttpError> {
    let agent = agent(timeout, true);
    let response = agent.get(url).call().map_err(|e| match e {
        ureq::Error::StatusCode(code) => HttpError::Status(code),
        ureq::Error::Timeout(_) => HttpError::Transport(format!(
            "GET {url} did not finish within {} s",
            timeout.as_secs()
        )),
        other => HttpError::Transport(format!("GET {url}: {other}")),
    })?;
    let mut body = response.into_body();
    body.with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => HttpError::Transport(format!(
                "GET {url}: the body exceeds {limit} bytes, the loader's budget for one file"
            )),
            other => HttpError::Transport(format!("GET {url}: {other}")),
        })
}

/// Why an address may not be connected to: the link-local range, where
/// cloud machines (and so CI runners) answer metadata requests with their
/// credentials (`169.254.169.254`, `fd00:ec2::254`), and the unspecified
/// address. A repository must not make the check read those: a generator
/// input would carry the answer into a report.
pub(crate) fn forbidden(ip: std::net::IpAddr) -> Option<&'static str> {
    use std::net::IpAddr;
    let metadata = "a link-local address (cloud metadata services answer there with the machine's credentials)";
    match ip {
        IpAddr::V4(v4) if v4.is_link_local() => Some(metadata),
        IpAddr::V4(v4) if v4.is_unspecified() => Some("the unspecified address"),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            if (first & 0xffc0) == 0xfe80
                || v6 == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
            {
                Some(metadata)
            } else if v6.is_unspecified() {
                Some("the unspecified address")
            } else {
                None
            }
        }
        IpAddr::V4(_) => None,
    }
}

/// ureq's resolver, refusing every name that resolves to a [`forbidden`]
/// address (so a redirect cannot reach one either).
#[derive(Debug)]
struct NoLinkLocal(ureq::unversioned::resolver::DefaultResolver);

impl ureq::unversioned::resolver::Resolver for NoLinkLocal {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.0.resolve(uri, config, timeout)?;
        if let Some(why) = addrs.iter().find_map(|a| forbidden(a.ip())) {
            return Err(ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} resolves to {why}; not fetched",
                    uri.host().unwrap_or_default()
                ),
            )));
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_addresses_are_forbidden_and_others_are_not() {
        for bad in [
            "169.254.169.254",
            "fd00:ec2::254",
            "fe80::1",
            "0.0.0.0",
            "::ffff:169.254.1.1",
        ] {
            assert!(
                forbidden(bad.parse().unwrap_or_else(|_| panic!("{bad}"))).is_some(),
                "{bad}"
            );
        }
        for ok in [
            "127.0.0.1",
            "10.0.0.1",
            "140.82.112.3",
            "::1",
            "2606:4700::1",
        ] {
            assert!(
                forbidden(ok.parse().unwrap_or_else(|_| panic!("{ok}"))).is_none(),
                "{ok}"
            );
        }
    }

    #[test]
    fn a_get_to_the_metadata_address_connects_nowhere() {
        let Err(HttpError::Transport(why)) = get(
            "http://169.254.169.254/latest/meta-data/",
            Duration::from_secs(5),
            1024,
        ) else {
            panic!("expected a refusal");
        };
        assert!(why.contains("link-local"), "{why}");
    }
}
