import Foundation

/// What kind of work a book is, in Crossref's words (its `type` field), and what each citation
/// format calls it.
public enum WorkType {
    /// The entry types of one kind of work: BibTeX's, RIS's (`TY`) and CSL's.
    public struct Entry: Sendable, Equatable {
        public var bibtex: String
        public var ris: String
        public var csl: String
        /// The field BibTeX (and RIS's `T2`, CSL's `container-title`) gives the venue in.
        public var venueField: String?

        public init(bibtex: String, ris: String, csl: String, venueField: String?) {
            self.bibtex = bibtex
            self.ris = ris
            self.csl = csl
            self.venueField = venueField
        }
    }

    /// Crossref's types (api.crossref.org/types) and the entries they make. Types Crossref
    /// lists that no citation style tells apart (`component`, `other`, …) cite as documents.
    public static let entries: [String: Entry] = [
        "journal-article": Entry(bibtex: "article", ris: "JOUR", csl: "article-journal", venueField: "journal"),
        "proceedings-article": Entry(
            bibtex: "inproceedings", ris: "CPAPER", csl: "paper-conference", venueField: "booktitle"),
        "book-chapter": Entry(bibtex: "incollection", ris: "CHAP", csl: "chapter", venueField: "booktitle"),
        "book-section": Entry(bibtex: "incollection", ris: "CHAP", csl: "chapter", venueField: "booktitle"),
        "book-part": Entry(bibtex: "incollection", ris: "CHAP", csl: "chapter", venueField: "booktitle"),
        "reference-entry": Entry(
            bibtex: "incollection", ris: "ENCYC", csl: "entry-encyclopedia", venueField: "booktitle"),
        "book": Entry(bibtex: "book", ris: "BOOK", csl: "book", venueField: "series"),
        "monograph": Entry(bibtex: "book", ris: "BOOK", csl: "book", venueField: "series"),
        "edited-book": Entry(bibtex: "book", ris: "EDBOOK", csl: "book", venueField: "series"),
        "reference-book": Entry(bibtex: "book", ris: "BOOK", csl: "book", venueField: "series"),
        "book-set": Entry(bibtex: "book", ris: "BOOK", csl: "book", venueField: "series"),
        "book-series": Entry(bibtex: "book", ris: "BOOK", csl: "book", venueField: "series"),
        "proceedings": Entry(bibtex: "proceedings", ris: "CONF", csl: "book", venueField: "series"),
        "posted-content": Entry(bibtex: "misc", ris: "UNPB", csl: "article", venueField: "howpublished"),
        "dissertation": Entry(bibtex: "phdthesis", ris: "THES", csl: "thesis", venueField: nil),
        "report": Entry(bibtex: "techreport", ris: "RPRT", csl: "report", venueField: "series"),
        "report-component": Entry(bibtex: "techreport", ris: "RPRT", csl: "report", venueField: "series"),
        "report-series": Entry(bibtex: "techreport", ris: "RPRT", csl: "report", venueField: "series"),
        "standard": Entry(bibtex: "techreport", ris: "STAND", csl: "standard", venueField: "series"),
        "dataset": Entry(bibtex: "misc", ris: "DATA", csl: "dataset", venueField: "howpublished"),
        "peer-review": Entry(bibtex: "misc", ris: "GEN", csl: "review", venueField: "howpublished"),
        "journal-issue": Entry(bibtex: "misc", ris: "JFULL", csl: "periodical", venueField: "journal"),
        "journal": Entry(bibtex: "misc", ris: "JFULL", csl: "periodical", venueField: "journal"),
        "component": Entry(bibtex: "misc", ris: "GEN", csl: "document", venueField: "howpublished"),
        "grant": Entry(bibtex: "misc", ris: "GRANT", csl: "document", venueField: "howpublished"),
        "database": Entry(bibtex: "misc", ris: "DBASE", csl: "dataset", venueField: "howpublished"),
        "other": Entry(bibtex: "misc", ris: "GEN", csl: "document", venueField: "howpublished"),
    ]

    /// The type when it is one of Crossref's, lowercased; nil otherwise.
    public static func known(_ type: String) -> String? {
        let lower = type.trimmingCharacters(in: .whitespaces).lowercased()
        return entries[lower] == nil ? nil : lower
    }

    /// Every type, sorted (for help and errors).
    public static var names: [String] { entries.keys.sorted() }
}

/// Where a book's year came from, ranked: a year is replaced only by one from a source that
/// ranks at least as high. Typed > looked up > printed in or stated by the document > the
/// file's dates.
public enum YearSource {
    public static let typed = "you"
    /// Stated by the PDF: printed on its first page, its XMP or the arXiv id it carries.
    public static let document = "pdf"
    /// The PDF's creation date: when the file was made, not the work.
    public static let file = "file"
    /// Came with a backup: where it came from is not known; ranked as the document.
    public static let restored = "backup"
    /// Came from a Zotero item's date: a reference manager's record, ranked as Crossref's.
    public static let zotero = "zotero"

    public static func rank(_ source: String?) -> Int {
        switch source {
        case typed: return 4
        case "crossref", "arxiv", zotero: return 3
        case file: return 1
        default: return 2
        }
    }
}
