// Package analyze is continuity's text analysis: how text is split into
// words, which words carry no meaning, and the terms words become.
//
//   - Words (terms.go) splits as SQLite FTS5's unicode61 tokenizer does;
//     Document turns a text into the form the full-text index stores and
//     WordTerms a query word into the terms it looks for there: English
//     words reduced to their Snowball (Porter2) stems (Stem, stem.go), and
//     runs of Chinese, Japanese and Korean characters, which have no
//     spaces between words, cut into overlapping character pairs
//     (bigrams).
//   - Tokens (tokens.go) splits finer, at camelCase and snake_case, and
//     Terms stems its tokens: the hash embedder's features and resume's
//     line terms.
//   - IsStopword and Meaningless (stopwords.go) say which words queries,
//     terms and features leave out.
//
// The full-text index (index/fulltext.go) stores each exchange in the form
// Document gives, and search (search/query.go) asks for WordTerms in the
// same form, so the two can never disagree on a stem or a segmentation.
package analyze
