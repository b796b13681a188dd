//! Query strings: decoded once into typed reads, with a 422 naming any unknown or invalid
//! parameter (contract: an unknown query parameter answers 422 naming it). Pure functions of
//! the decoded pairs, so the fuzzer can drive them without a server.

use read_model::Completed;
use read_model::changes::ChangesQuery;
use salvo::prelude::Request;

use super::reply::ApiError;

/// A request's query parameters, decoded (the first value of a repeated name counts).
pub struct Query<'a> {
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Query<'a> {
    pub fn of(req: &'a Request) -> Self {
        Query {
            pairs: req
                .queries()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
        }
    }

    pub fn from_pairs(pairs: Vec<(&'a str, &'a str)>) -> Self {
        Query { pairs }
    }

    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }

    /// Refuses any parameter the route does not take.
    pub fn only(&self, accepted: &[&str]) -> Result<(), ApiError> {
        match self.pairs.iter().find(|(k, _)| !accepted.contains(k)) {
            Some((unknown, _)) => Err(ApiError::Query {
                unknown: true,
                field: (*unknown).to_owned(),
                message: format!(
                    "unknown query parameter `{unknown}`; this route takes: {}",
                    accepted.join(", ")
                ),
            }),
            None => Ok(()),
        }
    }

    /// `completed`: `none`, `recent` or `all`; anything else is refused, not ignored.
    pub fn completed(&self, default: Completed) -> Result<Completed, ApiError> {
        match self.get("completed") {
            None => Ok(default),
            Some(v) => Completed::parse(v).ok_or_else(|| ApiError::Query {
                unknown: false,
                field: "completed".into(),
                message: "`completed` must be `none`, `recent` or `all`".into(),
            }),
        }
    }

    /// A whole number: ASCII digits only, no sign, fraction or exponent.
    pub fn whole_number(&self, name: &str) -> Result<Option<u64>, ApiError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::Query {
                unknown: false,
                field: name.into(),
                message: format!("`{name}` must be a whole number (ASCII digits)"),
            });
        }
        v.parse().map(Some).map_err(|_| ApiError::Query {
            unknown: false,
            field: name.into(),
            message: format!("`{name}` is out of range"),
        })
    }

    /// `GET /projects`: the view and the name to match (trimmed like a written name).
    pub fn projects(&self, name_chars: usize) -> Result<(Completed, Option<String>), ApiError> {
        self.only(&["completed", "name"])?;
        let view = self.completed(Completed::None)?;
        Ok((
            view,
            self.get("name")
                .map(|n| write_model::values::trim_to(n, name_chars)),
        ))
    }

    /// `GET /changes`: since, window, manifest and holding.
    pub fn changes(&self) -> Result<ChangesQuery, ApiError> {
        self.only(&["since", "completed", "manifest", "holding"])?;
        let since = self
            .whole_number("since")?
            .map(|s| s.min(i64::MAX as u64) as i64);
        let holding = self.whole_number("holding")?;
        let view = self.completed(Completed::Recent)?;
        let scoped = match self.get("manifest") {
            None => false,
            Some("changed") => true,
            Some(_) => {
                return Err(ApiError::Query {
                    unknown: false,
                    field: "manifest".into(),
                    message: "`manifest` takes only `changed`".into(),
                });
            }
        };
        Ok(ChangesQuery {
            since,
            view,
            scoped,
            holding,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_queries_are_checked_by_name_and_value() {
        let q = Query::from_pairs(vec![
            ("since", "12"),
            ("holding", "3"),
            ("manifest", "changed"),
        ]);
        let c = q.changes().unwrap();
        assert_eq!(
            (c.since, c.holding, c.scoped, c.view),
            (Some(12), Some(3), true, Completed::Recent)
        );
        for bad in ["1.5", "-1", "1e3", "", "x"] {
            assert!(
                Query::from_pairs(vec![("since", bad)]).changes().is_err(),
                "{bad}"
            );
        }
        assert!(Query::from_pairs(vec![("page", "1")]).changes().is_err());
        assert!(
            Query::from_pairs(vec![("manifest", "all")])
                .changes()
                .is_err()
        );
    }
}
