//! Query strings: decoded once into typed reads, with a 422 naming any unknown or invalid
//! parameter (contract: an unknown query parameter answers 422 naming it). Pure functions of
//! the decoded pairs, so the fuzzer can drive them without a server.

use read_model::Completed;
use read_model::changes::ChangesQuery;
use salvo::prelude::Request;

use read_model::search::query::SearchQuery;
use read_model::search::{self, Cursor, SearchRequest};

use super::reply::ApiError;
use crate::transfer::{ExportFormat, Source};

/// 422 naming a parameter whose value the route does not take.
fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::Query {
        unknown: false,
        field: field.into(),
        message: message.into(),
    }
}

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
                .map(|n| write_model::checks::trim_to(n, name_chars)),
        ))
    }

    /// `GET /search`: the query read whole, the view, the page size and where it starts.
    pub fn search(&self) -> Result<SearchRequest, ApiError> {
        self.only(&["q", "completed", "limit", "cursor"])?;
        let q = self
            .get("q")
            .ok_or_else(|| invalid("q", "`q` is required: the words to search for"))?;
        let query =
            SearchQuery::parse(q).map_err(|e| invalid("q", format!("`q` cannot be read: {e}")))?;
        let view = self.completed(Completed::None)?;
        let limit = match self.whole_number("limit")? {
            None => search::DEFAULT_LIMIT,
            Some(n) if (1..=search::MAX_LIMIT as u64).contains(&n) => n as usize,
            Some(_) => {
                return Err(invalid(
                    "limit",
                    format!("`limit` is 1 to {}", search::MAX_LIMIT),
                ));
            }
        };
        let after = match self.get("cursor") {
            None => None,
            Some(c) => Some(Cursor::parse(c).ok_or_else(|| {
                invalid(
                    "cursor",
                    "`cursor` is not one a search reply gave; search again without it",
                )
            })?),
        };
        Ok(SearchRequest {
            query,
            view,
            limit,
            after,
        })
    }

    /// `GET /export`: `format`, `json` unless given.
    pub fn export_format(&self) -> Result<ExportFormat, ApiError> {
        self.only(&["format"])?;
        match self.get("format") {
            None => Ok(ExportFormat::Json),
            Some(f) => ExportFormat::parse(f).ok_or_else(|| {
                invalid(
                    "format",
                    format!("unknown format `{f}`; `format` takes json, csv or ndjson"),
                )
            }),
        }
    }

    /// `POST /import`: what the file is (`from`, `workboard` unless given) and `lenient`.
    pub fn import(&self) -> Result<(Source, bool), ApiError> {
        self.only(&["from", "lenient"])?;
        let from = match self.get("from") {
            None => Source::Workboard,
            Some(f) => Source::parse(f).ok_or_else(|| {
                invalid(
                    "from",
                    format!("unknown source `{f}`; `from` takes workboard or trello"),
                )
            })?,
        };
        let lenient = match self.get("lenient") {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(invalid("lenient", "`lenient` is `true` or `false`")),
        };
        Ok((from, lenient))
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

    fn field_of(e: ApiError) -> String {
        match e {
            ApiError::Query { field, .. } => field,
            other => panic!("not a query error: {other:?}"),
        }
    }

    #[test]
    fn search_queries_are_checked_by_name_and_value() {
        let s = Query::from_pairs(vec![("q", "plants"), ("limit", "5"), ("completed", "all")])
            .search()
            .unwrap();
        assert_eq!((s.limit, s.view), (5, Completed::All));
        let s = Query::from_pairs(vec![("q", "plants")]).search().unwrap();
        assert_eq!((s.limit, s.view, s.after), (20, Completed::None, None));
        for (pairs, field) in [
            (vec![], "q"),
            (vec![("q", "")], "q"),
            (vec![("q", "\"open")], "q"),
            (vec![("q", "x"), ("limit", "0")], "limit"),
            (vec![("q", "x"), ("limit", "101")], "limit"),
            (vec![("q", "x"), ("limit", "ten")], "limit"),
            (vec![("q", "x"), ("cursor", "nope")], "cursor"),
            (vec![("q", "x"), ("completed", "some")], "completed"),
            (vec![("q", "x"), ("page", "2")], "page"),
        ] {
            let e = Query::from_pairs(pairs.clone()).search().unwrap_err();
            assert_eq!(field_of(e), field, "{pairs:?}");
        }
    }

    #[test]
    fn export_and_import_parameters_are_checked() {
        assert_eq!(
            Query::from_pairs(vec![]).export_format().unwrap(),
            ExportFormat::Json
        );
        assert_eq!(
            Query::from_pairs(vec![("format", "csv")])
                .export_format()
                .unwrap(),
            ExportFormat::Csv
        );
        let e = Query::from_pairs(vec![("format", "xlsx")])
            .export_format()
            .unwrap_err();
        assert_eq!(field_of(e), "format");
        assert_eq!(
            Query::from_pairs(vec![("from", "trello"), ("lenient", "true")])
                .import()
                .unwrap(),
            (Source::Trello, true)
        );
        for (pairs, field) in [
            (vec![("from", "asana")], "from"),
            (vec![("lenient", "yes")], "lenient"),
        ] {
            let e = Query::from_pairs(pairs).import().unwrap_err();
            assert_eq!(field_of(e), field);
        }
    }

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
