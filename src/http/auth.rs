//! Who is calling: the `Authorization` header resolved to a key, the key's daily allowance,
//! what its access lets it do, and the client's address for the throttles. Three hoops use
//! them: [`authenticate`] for every keyed route, [`authenticate_feed`] for the calendar feed
//! (the one route that also takes its key as `?key=`, since calendar apps send no header),
//! and [`keyless`] for the documents a client may read without a key.
//!
//! A calendar key reaches the feed alone: every other route answers it 403 `calendar_key`.
//! A key in the query string is taken by the feed alone, and only a calendar key: anywhere
//! else, or any other key, answers 403 `key_in_query` (refused rather than ignored, so a key
//! pasted into a URL is noticed; such URLs end up in histories and proxies' logs).

use std::net::IpAddr;

use salvo::http::HeaderValue;
use salvo::http::header::{self, HeaderName};
use salvo::prelude::*;

use super::reply::{ApiError, forbidden};
use super::shared::Shared;
use super::state;
use crate::allowance::Verdict;
use crate::auth::{Caller, KEY_PREFIX};
use write_model::KeyChange;
use write_model::store::KeyAccess;

// Header names every keyed reply carries, made once: a name given as text is parsed and
// checked on each insert.
const RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
const RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
const RATELIMIT_RESET: HeaderName = HeaderName::from_static("ratelimit-reset");

/// The client's address: the socket's peer, or under `--trust-proxy` the rightmost
/// `X-Forwarded-For` entry, the one the proxy itself added (entries to its left come from
/// the client, who can write anything there).
pub fn client_ip(req: &Request, state: &Shared) -> IpAddr {
    if state.trust_proxy
        && let Some(ip) = req
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .next_back()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse().ok())
    {
        return ip;
    }
    req.remote_addr().ip().unwrap_or(IpAddr::from([0, 0, 0, 0]))
}

/// How a request's key resolves.
pub enum Credentials {
    Missing,
    Valid(Caller),
    Invalid(ApiError),
}

/// Where a request carried its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Header,
    Query,
}

/// The key a request carries and where: the `Authorization` header, or (when `query` is
/// allowed and no header is sent) `?key=`. `Ok(None)`: no key at all; `Some((None, _))`: a
/// credential that is not a `wb_` key.
fn presented(req: &Request, query: bool) -> Result<Option<(Option<String>, Source)>, ApiError> {
    let mut values = req.headers().get_all(header::AUTHORIZATION).iter();
    let header = values.next();
    if values.next().is_some() {
        // Which one was meant is not guessed.
        return Err(ApiError::BadRequest(
            "the request carries two Authorization headers; send one",
        ));
    }
    let in_query = if query { query_key(req) } else { None };
    match (header, in_query) {
        (Some(_), Some(_)) => Err(ApiError::BadRequest(
            "the request carries a key twice (Authorization and ?key=); send one",
        )),
        (Some(value), None) => Ok(Some((
            presented_key(value).map(str::to_owned),
            Source::Header,
        ))),
        (None, Some(key)) => Ok(Some((
            Some(key).filter(|k| k.starts_with(KEY_PREFIX)),
            Source::Query,
        ))),
        (None, None) => Ok(None),
    }
}

/// `?key=`'s value, if the request has one.
fn query_key(req: &Request) -> Option<String> {
    req.queries().get("key").cloned()
}

/// Resolves the request's key, counting bad keys against the client's address.
fn credentials(req: &Request, state: &Shared, presented: Option<Option<String>>) -> Credentials {
    let Some(key) = presented else {
        return Credentials::Missing;
    };
    let key = key.as_deref();
    let now = write_model::clock::wall_ms();
    if let Some(caller) = key.and_then(|k| state.keys.find(&state.pepper.digest(k), now)) {
        return Credentials::Valid(caller);
    }
    state.metrics.bad_key();
    let ip = client_ip(req, state);
    if !state.bad_keys.allow(ip) {
        return Credentials::Invalid(ApiError::Throttled {
            retry_after: 10,
            message: "too many requests with a bad key from this address; wait for the window to end",
        });
    }
    Credentials::Invalid(ApiError::Unauthorized(match key {
        None => {
            "the Authorization header must be `Bearer wb_...` (the calendar feed's `?key=`: `wb_...`)"
        }
        Some(_) => "the key is unknown, revoked or expired",
    }))
}

/// The key of an `Authorization` value, if it is one.
fn presented_key(value: &HeaderValue) -> Option<&str> {
    value
        .to_str()
        .ok()
        .and_then(bearer_token)
        .filter(|k| k.starts_with(KEY_PREFIX))
}

/// How many times a key is read from the store while revocations keep coming.
const LEARN_TRIES: usize = 3;

/// On a store other nodes share, a key another node issued moments ago may not have reached
/// this node's cache yet: a key the cache does not know is looked up in the store once
/// before it counts as bad (unless its address is already throttled for bad keys).
async fn learn_key(req: &Request, state: &std::sync::Arc<Shared>, key: Option<&str>) {
    let Some(store) = state.store.clone().shared() else {
        return;
    };
    let Some(key) = key else {
        return;
    };
    let digest = state.pepper.digest(key);
    if state.keys.knows(&digest) || state.bad_keys.exhausted(client_ip(req, state)) {
        return;
    }
    // A revocation of any key meanwhile (the follower hearing one) leaves the key read
    // uncached, in case it was this one: it is read again, a few times at most.
    for _ in 0..LEARN_TRIES {
        let revocations = state.keys.revocations();
        let store = store.clone();
        let Ok(Ok(Some(found))) =
            tokio::task::spawn_blocking(move || store.live_key_by_digest(&digest)).await
        else {
            return;
        };
        if state.keys.insert_unless_revoked(found, revocations) {
            return;
        }
    }
}

/// The token of a `Bearer` credential; the scheme's name matches in any case (RFC 7235).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Whether a request writes: every POST, PATCH, PUT and DELETE but `POST /live/ticket`,
/// which only opens a socket that reads.
pub fn is_write(req: &Request) -> bool {
    use salvo::http::Method;
    matches!(
        *req.method(),
        Method::POST | Method::PATCH | Method::PUT | Method::DELETE
    ) && !req.uri().path().ends_with("/live/ticket")
}

/// Counts a keyed request against its key's daily allowance (and, when `is_write`, its
/// write allowance) and says so in the reply's `RateLimit-*` headers; an error once the
/// allowance is spent.
pub fn admit(
    res: &mut Response,
    state: &Shared,
    caller: &Caller,
    is_write: bool,
) -> Result<(), ApiError> {
    let now = write_model::clock::wall_ms();
    let (remaining, resets_at, admitted) =
        match state.allowances.admit(&caller.key_id, is_write, now) {
            Verdict::Allowed {
                remaining,
                resets_at,
            } => (remaining, resets_at, true),
            Verdict::Spent { resets_at, writes } => {
                state.metrics.allowance_exhausted(writes);
                (0, resets_at, false)
            }
        };
    let headers = res.headers_mut();
    headers.insert(
        RATELIMIT_LIMIT,
        HeaderValue::from(state.allowances.reads_per_day()),
    );
    headers.insert(RATELIMIT_REMAINING, HeaderValue::from(remaining));
    headers.insert(
        RATELIMIT_RESET,
        HeaderValue::from(((resets_at - now).max(0) as u64).div_ceil(1000)),
    );
    if admitted {
        Ok(())
    } else {
        Err(ApiError::AllowanceSpent { resets_at })
    }
}

/// Ends the request with `e`.
fn refuse(res: &mut Response, ctrl: &mut FlowCtrl, e: ApiError) {
    e.render(res);
    ctrl.skip_rest();
}

/// The hoop of every keyed route: a valid key, within its allowance, with its account's
/// document in memory. No header at all is refused at the edge with an HTML page.
#[handler]
pub async fn authenticate(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    if req.queries().contains_key("key") {
        return refuse(
            res,
            ctrl,
            ApiError::KeyInQuery(
                "`?key=` is taken by GET /calendar.ics alone; send the key as `Authorization: Bearer wb_...`",
            ),
        );
    }
    gate(req, depot, res, ctrl, false).await
}

/// The hoop of the calendar feed: as [`authenticate`], and the key may come as `?key=`
/// instead of the header (a calendar key only).
#[handler]
pub async fn authenticate_feed(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    gate(req, depot, res, ctrl, true).await
}

/// What both keyed hoops do; `feed`: the request is for the calendar feed.
async fn gate(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
    feed: bool,
) {
    let state = state(depot);
    let (key, source) = match presented(req, feed) {
        Ok(Some((key, source))) => (Some(key), source),
        Ok(None) => (None, Source::Header),
        Err(e) => return refuse(res, ctrl, e),
    };
    let raw_key = key.clone().flatten();
    learn_key(req, &state, raw_key.as_deref()).await;
    let caller = match credentials(req, &state, key) {
        Credentials::Valid(caller) => caller,
        Credentials::Missing => {
            forbidden(res);
            return ctrl.skip_rest();
        }
        Credentials::Invalid(e) => return refuse(res, ctrl, e),
    };
    if source == Source::Query && caller.access != KeyAccess::Calendar {
        // A key that can do more than read the feed does not belong in a URL.
        return refuse(
            res,
            ctrl,
            ApiError::KeyInQuery(
                "only a calendar key goes in the feed's URL; issue one with POST /keys {\"access\":\"calendar\"}, or send this key as `Authorization: Bearer wb_...`",
            ),
        );
    }
    // A read key's write is counted as the read it is, and refused before it reaches a
    // handler: nothing is written. A calendar key's request anywhere but the feed likewise.
    let write = is_write(req);
    let refused = match caller.access {
        KeyAccess::Full => None,
        KeyAccess::Read => write.then_some(ApiError::ReadOnlyKey),
        KeyAccess::Calendar => (!feed).then_some(ApiError::CalendarKey),
    };
    let admitted = match admit(res, &state, &caller, write && refused.is_none()) {
        // With its write allowance spent, a write sent with an idempotency key may still be
        // a retry to answer from memory, which counts as a read: it runs only as one.
        Err(ApiError::AllowanceSpent { resets_at })
            if write && refused.is_none() && super::idempotency::carries_key(req) =>
        {
            admit(res, &state, &caller, false).map(|()| {
                depot.insert_typed(super::idempotency::ReplayOnly { resets_at });
            })
        }
        other => other,
    };
    if let Err(e) = admitted {
        return refuse(res, ctrl, e);
    }
    if let Some(e) = refused {
        return refuse(res, ctrl, e);
    }
    if let Err(e) = ready(&state, &caller, write, raw_key.as_deref()).await {
        return refuse(res, ctrl, e);
    }
    depot.insert_typed(caller);
}

/// Makes the caller's account ready to be read, off the async workers. A cold account's
/// document loads from the store, so the handler's reads find it in memory.
///
/// On a shared store, a read first asks the store where it stands, in one round trip: the
/// account's committed revision, to which the document catches up first if behind, and
/// whether the caller's key is still live. So the read shows every write and revocation
/// acknowledged before it on any node, not only those the follower has heard of yet
/// (contract: Consistency). When the store cannot be asked now, the read is served from
/// memory as it stands, as reads are while the store cannot take writes ("reads still
/// work"), and may then miss what another node committed meanwhile. A write's group fills
/// the gap itself, so a write catches up only to what was announced.
///
/// `key` is the key the caller presented, to take off the cache if the store says it was
/// revoked.
async fn ready(
    state: &std::sync::Arc<Shared>,
    caller: &Caller,
    write: bool,
    key: Option<&str>,
) -> Result<(), ApiError> {
    let shared = match write {
        true => None,
        false => state.store.clone().shared(),
    };
    let cold = !state.read.is_loaded(&caller.account);
    if !cold && shared.is_none() && !state.read.is_behind(&caller.account) {
        return Ok(());
    }
    let (read, account, key_id) = (
        state.read.clone(),
        caller.account.clone(),
        caller.key_id.clone(),
    );
    let live = tokio::task::spawn_blocking(move || {
        let point = match shared.map(|store| store.read_point(&account, &key_id)) {
            None => None,
            Some(Ok(point)) => Some(point),
            Some(Err(e @ write_model::WriteError::Unavailable(_))) => {
                tracing::debug!(error = %e, %account, "a read served without asking the store");
                None
            }
            Some(Err(e)) => return Err(read_model::ReadError::Store(e)),
        };
        if point.is_some_and(|p| !p.key_live) {
            return Ok(false);
        }
        match (cold, point) {
            (true, _) => read.load(&account)?,
            (false, Some(point)) => read.catch_up_to(&account, point.rev)?,
            (false, None) if read.is_behind(&account) => read.catch_up(&account)?,
            (false, None) => {}
        }
        Ok(true)
    })
    .await
    .map_err(|e| read_model::ReadError::Interrupted(Box::new(e)))
    .and_then(|live| live)
    .map_err(ApiError::Read)?;
    if !live {
        // Revoked on another node: taken off here now, as the follower would.
        if let Some(key) = key {
            state.keys.apply(&KeyChange::Revoked {
                id: caller.key_id.clone(),
                digest: state.pepper.digest(key).to_vec(),
            });
        }
        state.hub.revoke(&caller.key_id);
        return Err(ApiError::Unauthorized(
            "the key is unknown, revoked or expired",
        ));
    }
    Ok(())
}

/// The hoop of the documents that need no key (discovery, OpenAPI): counted against the
/// key's allowance when one is sent, else against the keyless burst of the client's address.
#[handler]
pub async fn keyless(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let state = state(depot);
    let key = match presented(req, false) {
        Ok(key) => key.map(|(key, _)| key),
        Err(e) => return refuse(res, ctrl, e),
    };
    learn_key(req, &state, key.clone().flatten().as_deref()).await;
    let admitted = match credentials(req, &state, key) {
        Credentials::Valid(caller) if caller.access == KeyAccess::Calendar => {
            admit(res, &state, &caller, false).and(Err(ApiError::CalendarKey))
        }
        Credentials::Valid(caller) => admit(res, &state, &caller, is_write(req)),
        Credentials::Invalid(e) => Err(e),
        Credentials::Missing if state.discovery.allow(client_ip(req, &state)) => Ok(()),
        Credentials::Missing => Err(ApiError::Throttled {
            retry_after: u64::from(state.limits.discovery_burst_seconds),
            message: "too many keyless discovery requests from this address",
        }),
    };
    if let Err(e) = admitted {
        refuse(res, ctrl, e);
    }
}
