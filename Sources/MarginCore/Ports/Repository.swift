import Foundation

/// A type the repository stores: one table (`entity`), one row per value.
///
/// Models are plain `Codable` structs; the coding keys are the column names. Every model has a
/// database id (nil until inserted) and a stable UUID that survives export and import.
public protocol Model: Codable, Sendable {
    /// The table the model lives in.
    static var entity: String { get }
    /// Columns that identify a row for `upsert` ("update if it exists, else insert").
    static var naturalKey: [String] { get }
    var id: Int64? { get set }
    var uuid: UUID { get set }
}

/// A model the annotation index finds by its text. The store keeps the folded form of
/// `searchText` beside the row (computed here, in Swift), so the index needs no function of ours
/// inside the database.
public protocol SearchableModel: Model {
    var searchText: String { get }
}

/// Read access to the store, valid only inside `Repository.read` or `Repository.write`.
public protocol StoreReader {
    func fetch<M: Model>(_ query: Query<M>) throws -> [M]
    func count<M: Model>(_ query: Query<M>) throws -> Int
    /// The sum of an integer field over the rows the query matches (0 for none).
    func sum<M: Model>(_ field: Field<M, Int>, _ query: Query<M>) throws -> Int
    /// `count` and `sum` at once (one statement where a statement costs a round trip).
    func countAndSum<M: Model>(_ field: Field<M, Int>, _ query: Query<M>) throws -> (count: Int, sum: Int)
    /// The different values of a text field over the rows the query matches, nil left out, in
    /// no given order (one statement, not a count for each value looked for).
    func distinct<M: Model>(_ field: Field<M, String?>, _ query: Query<M>) throws -> [String]
    /// The full-text index, read in the same snapshot.
    var textIndex: any TextIndex { get }
    /// The user this store acts as (a team library's PostgreSQL role); nil for a personal
    /// library, whose one user owns everything.
    var user: String? { get }
    /// Who wrote the annotation `id` of `entity`, when this user may see it but the shown
    /// audience leaves it out (another user's shared one); nil otherwise.
    func hiddenAnnotationOwner(_ entity: String, id: Int64) throws -> String?
    /// Every highlight of a book this user may place again on a new version of it: a team
    /// library's member who may change the book's content places everyone's (it is read for
    /// that only); anyone else their own.
    func highlightsToPlace(bookId: Int64) throws -> [Highlight]
    /// Reads about to be made, sent together by a store that answers from a server (one wait
    /// for all of them, not one each): `reads` runs on a reader that sends each statement and
    /// answers it empty, and the same reads made next, with the same arguments, are answered
    /// from what was sent. So what `reads` reads must not depend on what it read before (such
    /// a read is sent in vain, and made again when asked). A store that answers in process
    /// runs nothing. Whether the reads were sent.
    @discardableResult func sendAhead(_ reads: (any StoreReader) throws -> Void) throws -> Bool
    /// What a search reads of the books it searches (`books`, nil for all) whatever it finds
    /// (one statement where a statement costs the server's time, not three); their languages
    /// only when asked (`languages`).
    func searchedBooks(_ books: [Int64]?, languages: Bool) throws -> SearchedBooks
    /// The titles of the books with these ids, by id (an id of no book left out): what a search
    /// shows of the books it hit, without reading the rest of their rows.
    func titles(of books: [Int64]) throws -> [Int64: String]
    /// The printed page numbers of the books with these ids that label their pages
    /// (`BookGuide.labels`), by id: what a search shows of a hit's page, without reading the
    /// books' outlines. Labels stored damaged (not a list of texts) are left out, as a guide
    /// reads them.
    func pageLabels(of books: [Int64]) throws -> [Int64: [String]]
}

/// What a search asks of the books it searches (`StoreReader.searchedBooks`): the books (nil for
/// all), and whether their languages too.
public struct BooksSearched: Sendable, Equatable {
    public let books: [Int64]?
    public let languages: Bool

    public init(books: [Int64]?, languages: Bool) {
        self.books = books
        self.languages = languages
    }

    /// Whether what was read for `self` answers `asked` (the same books, the languages if asked).
    public func answers(_ asked: BooksSearched) -> Bool { books == asked.books && (languages || !asked.languages) }
}

/// The books a search read, as it tells of them: those with pages without text, and their
/// languages (see `StoreReader.searchedBooks`).
public struct SearchedBooks: Sendable, Equatable {
    /// How many have pages without text (`Book.textlessPages` over 0), and how many pages.
    public var textlessBooks = 0
    public var textlessPages = 0
    /// The title of the one such book, when there is one only.
    public var textlessTitle: String?
    /// Their languages (nil left out), sorted; empty when not asked.
    public var languages: [String] = []

    public init(textlessBooks: Int = 0, textlessPages: Int = 0, textlessTitle: String? = nil, languages: [String] = [])
    {
        self.textlessBooks = textlessBooks
        self.textlessPages = textlessPages
        self.textlessTitle = textlessTitle
        self.languages = languages
    }
}

extension StoreReader {
    @discardableResult public func sendAhead(_ reads: (any StoreReader) throws -> Void) throws -> Bool { false }

    public func titles(of books: [Int64]) throws -> [Int64: String] {
        guard !books.isEmpty else { return [:] }
        return Dictionary(
            try fetch(Query<Book>().filter(Book.Fields.id.isIn(books))).compactMap { book in
                book.id.map { ($0, book.title) }
            }, uniquingKeysWith: { a, _ in a })
    }

    public func searchedBooks(_ books: [Int64]?, languages: Bool) throws -> SearchedBooks {
        var searched = Query<Book>()
        if let books { searched = searched.filter(Book.Fields.id.isIn(books)) }
        let scanned = searched.filter(Book.Fields.textlessPages > 0)
        let (count, pages) = try countAndSum(Book.Fields.textlessPages, scanned)
        return SearchedBooks(
            textlessBooks: count, textlessPages: pages,
            textlessTitle: count == 1 ? try first(scanned)?.title : nil,
            languages: languages ? try distinct(Book.Fields.lang, searched).sorted() : [])
    }

    public func countAndSum<M: Model>(_ field: Field<M, Int>, _ query: Query<M>) throws -> (count: Int, sum: Int) {
        (try count(query), try sum(field, query))
    }

    public func hiddenAnnotationOwner(_ entity: String, id: Int64) throws -> String? { nil }

    public func highlightsToPlace(bookId: Int64) throws -> [Highlight] {
        try fetch(Query<Highlight>().filter(Highlight.Fields.bookId == bookId))
    }
}

/// Write access to the store, valid only inside `Repository.write`: everything done through one
/// writer commits together or not at all.
public protocol StoreWriter: StoreReader {
    /// Inserts the model and sets its `id`.
    func insert<M: Model>(_ model: inout M) throws
    /// Saves every column of an existing row, found by `id`.
    func update<M: Model>(_ model: M) throws
    /// Inserts the model or, when a row with the same natural key exists, updates that row in
    /// place (keeping its id and uuid), in one statement: two writers can't both insert it.
    /// Sets the model's `id` and `uuid` to the row's.
    func upsert<M: Model>(_ model: inout M) throws
    /// Deletes the rows the query matches; returns how many.
    @discardableResult func delete<M: Model>(_ query: Query<M>) throws -> Int
    /// Moves a book's annotations to a new version: the highlights given (as `highlightsToPlace`
    /// read them, placed again), and the bookmarks and memos on a page `moved` maps elsewhere.
    /// Only their places change.
    func moveAnnotations(bookId: Int64, highlights: [Highlight], moved: [Int: Int]) throws
    /// Notes that the user opened a book (`openedAt`, for `recent`); nil when it is gone. A team
    /// library keeps it as the user's own, never rewriting (or locking) the shared book row.
    func noteOpened(bookId: Int64, at date: Date) throws -> Book?
}

extension StoreWriter {
    public func noteOpened(bookId: Int64, at date: Date) throws -> Book? {
        guard var book = try find(Book.self, id: bookId) else { return nil }
        book.openedAt = date
        try update(book)
        return book
    }

    public func moveAnnotations(bookId: Int64, highlights: [Highlight], moved: [Int: Int]) throws {
        for highlight in highlights { try update(highlight) }
        for var bookmark in try fetch(Query<Bookmark>().filter(Bookmark.Fields.bookId == bookId)) {
            guard let page = moved[bookmark.page], page != bookmark.page else { continue }
            bookmark.page = page
            try update(bookmark)
        }
        for var memo in try fetch(Query<Memo>().filter(Memo.Fields.bookId == bookId)) {
            guard let old = memo.page, let page = moved[old], page != old else { continue }
            memo.page = page
            try update(memo)
        }
    }
}

extension StoreReader {
    public func first<M: Model>(_ query: Query<M>) throws -> M? {
        try fetch(query.limit(1)).first
    }

    public func find<M: Model>(_ type: M.Type, id: Int64) throws -> M? {
        try first(Query<M>().filter(Field<M, Int64>("id") == id))
    }

    public func all<M: Model>(_ type: M.Type) throws -> [M] {
        try fetch(Query<M>())
    }
}

extension StoreWriter {
    @discardableResult public func delete<M: Model>(_ model: M) throws -> Int {
        guard let id = model.id else { return 0 }
        return try delete(Query<M>().filter(Field<M, Int64>("id") == id))
    }
}

/// A store of models with transactions. Implemented over SQLite by `SQLiteRepository`; the
/// protocol says nothing of SQL so that another backend could implement it.
///
/// Both calls suspend the task while the backend works or waits (for another process's write
/// lock, say) on a thread of its own: no cooperative thread is blocked.
public protocol Repository: Sendable {
    /// Runs `body` on a consistent snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T) async throws -> T
    /// Runs `body` in one write transaction: it commits when `body` returns, and rolls back
    /// everything when it throws.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) async throws -> T
}
