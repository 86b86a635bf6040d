import Foundation

/// The library's writes, named for what they do; each is one transaction, all or nothing.
///
/// They are requirements of `LibraryStore` with one implementation here, over the store's
/// `Repository`, so every backend has them; a backend may implement any of them natively (in
/// its own SQL, say). Use cases decide *what* to write; these methods write it.
public protocol LibraryTransactions: Sendable {
    /// Saves a book just added, by its SHA-256: a new book with its first version, its source,
    /// tags and page text; or, when the library has the book already, the new source (an
    /// upsert by book and URL), the tags, a password it lacked and its text if it had none.
    func addBook(_ book: Book, source: Source, tags: [String], text: PagesText?, now: Date) async throws -> AddedBook
    /// Adds tags (already normalized) to a book; ones it has (whatever their case) are kept.
    func addTags(_ names: [String], toBook id: Int64, now: Date) async throws
    /// Changes a book (`change` edits it in memory, inside the transaction), adds and removes
    /// tags; the book's `updatedAt` becomes `now`.
    func updateBook(
        id: Int64, addTags: [String], removeTags: [String], now: Date,
        _ change: @escaping @Sendable (inout Book) -> Void
    ) async throws -> Book
    /// Notes that the book was opened now (for `recent`); nil when it is gone.
    func touchBook(id: Int64, at date: Date) async throws -> Book?
    /// Removes books with everything on them; with annotations only when `confirmed` (else
    /// nothing is removed). Says what went and which files (current and old versions) it used.
    func removeBooks(ids: [Int64], confirmed: Bool) async throws -> [RemovedBook]
    /// Replaces a book's page text and marks it indexed; nil when the book is gone.
    func replaceText(ofBook id: Int64, with text: PagesText, now: Date) async throws -> Book?
    /// Changes what a book is (title, authors, identifiers, citation key) in one transaction;
    /// `change` may read the store (a key must be the library's only one).
    func updateMetadata(
        ofBook id: Int64, now: Date, _ change: @escaping @Sendable (any StoreReader, inout Book) throws -> Void
    ) async throws -> Book
    /// Records a source's validators and when it was checked.
    func recordCheck(of source: Source) async throws
    /// Stores a version of a book (an upsert by book and SHA-256) with the source that served
    /// it; with `serving`, the book serves it from now on: its text, re-anchored highlights, and
    /// bookmarks and memos moved with their pages.
    func addVersion(_ version: Version, checked source: Source?, serving change: VersionChange?) async throws

    /// Saves new annotations of one book, each getting its id; with `openedAt`, notes the book
    /// as opened then (for `recent`). One transaction, which also reads the book's guide (its
    /// pages' labels and chapters, to show the annotations with).
    func addAnnotations<M: Model>(_ annotations: [M], of bookId: Int64, openedAt: Date?) async throws
        -> (saved: [M], guide: BookGuide?)
    /// `addAnnotations` of what `make` makes of the book as stored, read in the same transaction
    /// (a request naming a book by id goes to the database once); nil, with nothing saved, when
    /// there is no book `bookId`.
    func addAnnotations<M: Model>(
        toBook bookId: Int64, openedAt: Date, _ make: @escaping @Sendable (Book) throws -> [M]
    ) async throws -> (saved: [M], guide: BookGuide?)?
    /// Saves the annotations whose UUID the library doesn't hold yet; the others are left as
    /// they are. Returns how many were added.
    func addNewAnnotations(highlights: [Highlight], memos: [Memo]) async throws -> (highlights: Int, memos: Int)
    /// Keeps what OCR read on pages of the PDF `sha256` (each page replacing what was kept for
    /// it), before the book's text is replaced: work that an interruption doesn't lose.
    func keepRecognized(_ pages: [OCRPage], of sha256: String) async throws
    /// Throws the store's refusal when this user may not keep what OCR reads on the PDF
    /// `sha256` (in a team library, who may change the book's text); writes nothing. Asked
    /// before minutes of reading, not after them.
    func checkMayKeepRecognized(of sha256: String) async throws
    /// Changes an annotation (`change` edits it in memory); its `updatedAt` becomes `now`.
    func updateAnnotation<M: Annotation>(
        _ type: M.Type, id: Int64, now: Date, _ change: @escaping @Sendable (inout M) -> Void
    ) async throws -> M
    /// Removes an annotation and returns it.
    func removeAnnotation<M: Model>(_ type: M.Type, id: Int64) async throws -> M

    /// Merges a backup: books matched by UUID or SHA-256 (of any version; a book the library
    /// hasn't got is created), annotations by UUID (the same content is unchanged; of two
    /// different versions the newer wins). A problem anywhere imports nothing; a dry run
    /// imports nothing and says what it would have done.
    func importBackup(_ books: [BackupBook], dryRun: Bool) async throws -> BackupMerge
}

/// The pages of a book's text, as extracted.
public struct PagesText: Sendable, Equatable {
    /// In order; `pages[0]` is page 1 (their `bookId` is set when stored).
    public var pages: [PageText]
    /// The book's outline and page labels, read with the text (`bookId` is set when stored);
    /// nil when they were not read, and the stored ones stay.
    public var guide: BookGuide?
    /// What the PDF says it is (its metadata, its first page), read with the text.
    public var found: FoundMetadata?

    /// What recognition read on pages without a usable text layer, every such page of the book
    /// (their `sha256` is set when stored; those read before keep their `id`); the pages' text
    /// is already theirs.
    public var ocr: [OCRPage] = []

    public init(pages: [PageText], guide: BookGuide? = nil, found: FoundMetadata? = nil, ocr: [OCRPage] = []) {
        self.pages = pages
        self.guide = guide
        self.found = found
        self.ocr = ocr
    }

    /// Pages with no text at all (scans).
    public var textless: Int { pages.filter { $0.text.allSatisfy(\.isWhitespace) }.count }
}

/// What `addBook` saved.
public struct AddedBook: Sendable {
    public var book: Book
    /// The library had the book already (the same SHA-256).
    public var existed: Bool
}

/// A book `removeBooks` removed, with what went with it.
public struct RemovedBook: Sendable {
    public var book: Book
    public var sources: [String]
    public var tags: [String]
    public var bookmarks: Int
    public var highlights: Int
    public var memos: Int
    /// The SHA-256s of the files it used (its current file and every version's).
    public var files: Set<String>
}

/// What serving another version of a book changes.
public struct VersionChange: Sendable {
    /// The version's text.
    public var text: PagesText
    /// Highlights re-anchored on it (moved, or marked orphaned).
    public var highlights: [Highlight]
    /// Where each old page went (pages not found keep their number).
    public var pageMap: [Int: Int]

    public init(text: PagesText, highlights: [Highlight], pageMap: [Int: Int]) {
        self.text = text
        self.highlights = highlights
        self.pageMap = pageMap
    }
}
