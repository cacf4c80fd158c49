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
    pub fn definitive(&self) -> bool {
        matches!(self, HttpError::Status(code) if (400..500).contains(code) && *code != 408 && *code != 429)
    }
}

/// GETs `url` within `timeout`, reading at most `limit` bytes.
pub fn get(url: &str, timeout: Duration, limit: u64) -> Result<Vec<u8>, HttpError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .user_agent(concat!("conformance/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
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
