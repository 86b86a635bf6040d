import Foundation
import MarginCore

/// Values a user gives for a book's metadata (`margin meta --doi … --year …`); nil leaves a
/// field as it is.
public struct MetadataEdit: Sendable, Equatable {
    public var title: String?
    public var author: String?
    public var year: Int?
    public var doi: String?
    public var arxiv: String?
    public var venue: String?
    public var publisher: String?
    public var citationKey: String?
    /// What kind of work it is (one of `WorkType.names`).
    public var workType: String?

    public init(
        title: String? = nil, author: String? = nil, year: Int? = nil, doi: String? = nil, arxiv: String? = nil,
        venue: String? = nil, publisher: String? = nil, citationKey: String? = nil, workType: String? = nil
    ) {
        self.title = title
        self.author = author
        self.year = year
        self.doi = doi
        self.arxiv = arxiv
        self.venue = venue
        self.publisher = publisher
        self.citationKey = citationKey
        self.workType = workType
    }

    /// Nothing to set.
    public var isEmpty: Bool { self == MetadataEdit() }
}

/// How `meta` finds metadata besides what the user types.
public struct MetadataSources: Sendable, Equatable {
    /// Read the PDF again (title and authors on its first page, DOI, arXiv id, year, outline and
    /// page labels).
    public var refresh = false
    /// Ask Crossref (DOI) or arXiv (id).
    public var lookup = false
    /// Let what is found replace what a user typed.
    public var overwrite = false
    /// A book with no DOI or arXiv id is not looked up, without an error (`meta --all --lookup`:
    /// having no identifier is normal).
    public var skipUnidentified = false

    public init(refresh: Bool = false, lookup: Bool = false, overwrite: Bool = false) {
        self.refresh = refresh
        self.lookup = lookup
        self.overwrite = overwrite
    }
}

/// One field `meta` would change or changed.
public struct MetadataChange: Sendable, Equatable, Encodable {
    public var field: String
    @Null public var from: String?
    @Null public var to: String?
    /// "you", "pdf", "crossref" or "arxiv".
    public var source: String
    /// False when it was kept as it was (a value a user typed, or a dry run).
    public var applied: Bool
    /// Why it was not applied.
    @Null public var reason: String?
}

/// What `meta` did to one book.
public struct MetadataReport: Sendable, Encodable {
    public var book: BookInfo
    public var changes: [MetadataChange]
    public var dryRun: Bool
    /// What a lookup found, when one was made.
    public var lookedUp: LookedUp?

    public init(book: BookInfo, changes: [MetadataChange], dryRun: Bool, lookedUp: LookedUp?) {
        self.book = book
        self.changes = changes
        self.dryRun = dryRun
        self.lookedUp = lookedUp
    }
}

/// The text fields of a book `meta` reads and writes, by name.
private func metadataField(_ name: String) -> WritableKeyPath<Book, String?>? {
    switch name {
    case "author": return \.author
    case "doi": return \.doi
    case "arxiv": return \.arxiv
    case "venue": return \.venue
    case "publisher": return \.publisher
    case "workType": return \.workType
    default: return nil
    }
}

extension Library {
    /// Fills and corrects what `book` is: the values `edit` gives (they count as typed by the
    /// user), what its PDF says (`refresh`), what Crossref or arXiv say (`lookup`). Found values
    /// never replace typed ones unless `overwrite`; a dry run changes nothing and says what would
    /// change.
    public func updateMetadata(_ book: Book, edit: MetadataEdit, sources: MetadataSources, dryRun: Bool) async throws
        -> MetadataReport
    {
        var proposed = book
        var changes = [MetadataChange]()
        let urls = try await info(book).sources
        // A title made from the name of the file it came from may be replaced by a found one.
        let fileTitles = Set(urls.compactMap { try? InputKind($0).fallbackTitle })
        /// `yearSource`: where an offered year came from (`YearSource`), when not `source`.
        func offer(
            _ field: String, _ value: String?, source: String, onlyIfJunk: Bool = false, yearSource: String? = nil
        ) {
            guard let value, !value.isEmpty else { return }
            let current =
                field == "title"
                ? proposed.title
                : field == "year"
                    ? proposed.year.map(String.init)
                    : metadataField(field).flatMap { proposed[keyPath: $0] }
            guard current != value else { return }
            var change = MetadataChange(
                field: field, from: current, to: value, source: source, applied: !dryRun,
                reason: dryRun ? "dry run" : nil)
            if source != "you" {
                if proposed.userFields.contains(field) && !sources.overwrite {
                    change.applied = false
                    change.reason = "typed by you (--overwrite replaces it)"
                } else if onlyIfJunk, let current, !isPlaceholderTitle(current, fileTitles: fileTitles) {
                    change.applied = false
                    change.reason = "the \(field) it has looks right (--\(field) sets it)"
                } else if field == "year", current != nil,
                    YearSource.rank(yearSource ?? source) < YearSource.rank(proposed.yearSource)
                {
                    change.applied = false
                    change.reason =
                        "the year it has came from \(describeYearSource(proposed.yearSource)) (--year sets it)"
                }
            }
            if change.applied || dryRun && change.reason == "dry run" {
                set(field, value, on: &proposed)
                if field == "year" { proposed.yearSource = yearSource ?? source }
                if source == "you", !proposed.userFields.contains(field) { proposed.userFields.append(field) }
            }
            changes.append(change)
        }
        var extracted: ExtractedText?
        if sources.refresh {
            let path = try cachedFile(book)
            let text = try extractText(path: path, password: try password(of: book), pageCount: book.pages)
            extracted = text
            var described = book
            describe(
                &described, found: text.found, source: urls.first { Identifiers.arxiv(inURL: $0) != nil } ?? urls.first)
            offer("title", text.found?.title, source: "pdf", onlyIfJunk: true)
            if book.author == nil { offer("author", text.found?.author, source: "pdf") }
            offer("doi", described.doi, source: "pdf")
            offer("arxiv", described.arxiv, source: "pdf")
            offer("year", described.year.map(String.init), source: "pdf", yearSource: described.yearSource)
            offer("venue", described.venue, source: "pdf")
        }
        // Typed identifiers are what a lookup looks up.
        offer("doi", edit.doi, source: "you")
        offer("arxiv", edit.arxiv, source: "you")
        var lookedUp: LookedUp?
        let identified = proposed.doi != nil || proposed.arxiv != nil
        if sources.lookup, identified || !sources.skipUnidentified {
            // The identifier just typed is the one to look up; else the DOI, then the arXiv id.
            let preferArxiv = edit.arxiv != nil && edit.doi == nil
            guard let found = try await lookUp(doi: preferArxiv ? nil : proposed.doi, arxiv: proposed.arxiv) else {
                throw MarginError.invalidArgument(
                    "'\(book.title)' has no DOI or arXiv id to look up: give --doi or --arxiv")
            }
            lookedUp = found
            offer("title", found.title, source: found.service)
            offer("author", found.author, source: found.service)
            offer("year", found.year.map(String.init), source: found.service)
            offer("workType", found.workType, source: found.service)
            offer("venue", found.venue, source: found.service)
            offer("publisher", found.publisher, source: found.service)
            offer("doi", found.doi, source: found.service)
            if found.service == "arxiv" { offer("arxiv", found.arxiv, source: found.service) }
        }
        offer("title", edit.title, source: "you")
        offer("author", edit.author, source: "you")
        offer("year", edit.year.map(String.init), source: "you")
        offer("venue", edit.venue, source: "you")
        offer("publisher", edit.publisher, source: "you")
        offer("workType", edit.workType, source: "you")
        if let key = edit.citationKey, key != book.citationKey {
            changes.append(
                MetadataChange(
                    field: "citationKey", from: book.citationKey, to: key, source: "you", applied: !dryRun,
                    reason: dryRun ? "dry run" : nil))
        }
        if dryRun {
            return MetadataReport(book: try await info(book), changes: changes, dryRun: true, lookedUp: lookedUp)
        }
        let id = book.id ?? 0
        if let extracted { _ = try await database.replaceText(ofBook: id, with: extracted, now: Date()) }
        let final = proposed
        let wantedKey = edit.citationKey
        let saved = try await database.updateMetadata(ofBook: id, now: Date()) { store, book in
            book.title = final.title
            book.author = final.author
            book.year = final.year
            book.doi = final.doi
            book.arxiv = final.arxiv
            book.venue = final.venue
            book.publisher = final.publisher
            book.workType = final.workType
            book.yearSource = final.yearSource
            book.userFields = final.userFields
            if let wantedKey {
                if let holder = try store.first(Query<Book>().filter(Book.Fields.citationKey == wantedKey)),
                    holder.id != book.id
                {
                    throw MarginError.invalidArgument(
                        "the citation key '\(wantedKey)' is already the key of '\(holder.title)'")
                }
                book.citationKey = wantedKey
            } else if book.citationKey == nil {
                book.citationKey = try store.unusedCitationKey(for: book)
            }
        }
        return MetadataReport(book: try await info(saved), changes: changes, dryRun: false, lookedUp: lookedUp)
    }

    /// What Crossref says of the DOI, else what arXiv says of the id; nil with neither.
    func lookUp(doi: String?, arxiv: String?) async throws -> LookedUp? {
        if let doi {
            return try await MetadataLookup.crossref(doi: doi, configuration: configuration, downloader: downloader)
        }
        if let arxiv {
            return try await MetadataLookup.arxiv(
                id: Identifiers.unversioned(arxiv), configuration: configuration, downloader: downloader)
        }
        return nil
    }

    /// The books as references, each with its citation key (made and kept now for a book
    /// that had none) and the web address it came from.
    public func references(_ books: [Book]) async throws -> [Reference] {
        var references = [Reference]()
        for book in books {
            var current = book
            if book.citationKey == nil {
                current = try await database.updateMetadata(ofBook: book.id ?? 0, now: book.updatedAt) { store, book in
                    if book.citationKey == nil { book.citationKey = try store.unusedCitationKey(for: book) }
                }
            }
            let url = try await info(current).sources.first { $0.hasPrefix("http://") || $0.hasPrefix("https://") }
            references.append(Reference(book: current, url: url))
        }
        return references
    }

    /// Whether a title is one a PDF's junk gave (an identifier, a file name, the name of the
    /// file it came from): a title found on the page may replace it.
    private func isPlaceholderTitle(_ title: String, fileTitles: Set<String>) -> Bool {
        Identifiers.isIdentifierTitle(title) || cleanTitle(title) != title || fileTitles.contains(title)
    }
}

/// Where a year came from, as a sentence says it.
private func describeYearSource(_ source: String?) -> String {
    switch source {
    case YearSource.typed: return "you"
    case "crossref": return "Crossref"
    case "arxiv": return "arXiv"
    case YearSource.file: return "the PDF's creation date"
    case YearSource.restored: return "a backup"
    default: return "the PDF"
    }
}

private func set(_ field: String, _ value: String, on book: inout Book) {
    switch field {
    case "title": book.title = value
    case "year": book.year = Int(value)
    default:
        if let path = metadataField(field) { book[keyPath: path] = value }
    }
}
