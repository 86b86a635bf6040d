import Foundation

/// A saved PDF: identified by the SHA-256 of its bytes.
public struct Book: Model, Equatable {
    public static let entity = "book"
    public static let naturalKey = ["sha256"]

    public var id: Int64?
    public var uuid: UUID
    /// SHA-256 of the PDF's bytes, 64 lowercase hex digits.
    public var sha256: String
    public var title: String
    public var author: String?
    public var pages: Int
    public var bytes: Int64
    public var folder: String?
    /// A free-text note on the whole book.
    public var memo: String?
    /// The password that opens an encrypted PDF (kept in the user-only library file).
    public var password: String?
    public var addedAt: Date
    public var updatedAt: Date
    public var openedAt: Date?
    /// Pages with nothing legible (no usable text layer, and none recognized), counted when the
    /// book was indexed.
    public var textlessPages: Int = 0
    /// Pages whose text was recognized from their image (`OCRPage`).
    public var ocrPages: Int = 0
    /// The mean confidence of the recognized words (0 to 100); nil when no page was recognized.
    public var ocrConfidence: Double?
    /// When the page text was indexed; nil for a book not indexed yet.
    public var indexedAt: Date?
    /// The user (PostgreSQL role) who added it to a team library; nil in a personal library.
    public var addedBy: String?
    /// The Digital Object Identifier ("10.1145/…"), as found in the PDF, its address or a lookup.
    public var doi: String?
    /// The arXiv identifier ("2305.03393v2", "hep-th/9901001").
    public var arxiv: String?
    /// The year of publication.
    public var year: Int?
    /// The key citations use (`author-year-word`, unique in the library); once made, it stays.
    public var citationKey: String?
    /// Where it appeared: a journal's or proceedings' name.
    public var venue: String?
    public var publisher: String?
    /// The fields a user set by hand (`title`, `author`, `year`, `doi`, `arxiv`, …): metadata
    /// found later (a refresh, a lookup) never replaces them unless told to.
    public var userFields: [String] = []
    /// What kind of work it is, in Crossref's words (`journal-article`, `proceedings-article`,
    /// `book-chapter`, `posted-content`, `dissertation`, `report`, …); nil when not known.
    public var workType: String?
    /// Where the year came from, to rank what is found later against it (`YearSource`).
    public var yearSource: String?
    /// The language it is written in (ISO 639-1: "en", "de"), told from its text when indexed
    /// (`Languages.detect`) or set by hand (then `userFields` holds "lang"); its words are
    /// stemmed in it. Nil when not clear.
    public var lang: String?

    /// A new book; `uuid` is given when one is read back (a new UUID reads /dev/urandom: an
    /// open, a read and a close a book, for `list` of a whole library).
    public init(
        sha256: String, title: String, author: String?, pages: Int, bytes: Int64,
        folder: String? = nil, password: String? = nil, now: Date = Date(), uuid: UUID? = nil
    ) {
        self.uuid = uuid ?? UUID()
        self.sha256 = sha256
        self.title = title
        self.author = author
        self.pages = pages
        self.bytes = bytes
        self.folder = folder
        self.password = password
        self.addedAt = now
        self.updatedAt = now
    }

    public enum Fields {
        public static let id = Field<Book, Int64>("id")
        public static let uuid = Field<Book, UUID>("uuid")
        public static let sha256 = Field<Book, String>("sha256")
        public static let title = Field<Book, String>("title")
        public static let author = Field<Book, String?>("author")
        public static let folder = Field<Book, String?>("folder")
        public static let addedAt = Field<Book, Date>("addedAt")
        public static let openedAt = Field<Book, Date?>("openedAt")
        public static let indexedAt = Field<Book, Date?>("indexedAt")
        public static let textlessPages = Field<Book, Int>("textlessPages")
        public static let ocrPages = Field<Book, Int>("ocrPages")
        public static let pages = Field<Book, Int>("pages")
        public static let citationKey = Field<Book, String?>("citationKey")
        public static let lang = Field<Book, String?>("lang")
    }
}

/// A URL a book was downloaded from, with the validators for revalidating it.
public struct Source: Model, Equatable {
    public static let entity = "source"
    public static let naturalKey = ["bookId", "url"]

    public var id: Int64?
    public var uuid: UUID
    public var bookId: Int64
    public var url: String
    public var etag: String?
    public var lastModified: String?
    public var addedAt: Date
    public var updatedAt: Date
    /// When the URL was last revalidated.
    public var checkedAt: Date?

    /// `uuid`: nil for a new one (a stored source passes its own: a new one costs a read of
    /// `/dev/urandom`).
    public init(
        bookId: Int64, url: String, etag: String? = nil, lastModified: String? = nil, now: Date = Date(),
        uuid: UUID? = nil
    ) {
        self.uuid = uuid ?? UUID()
        self.bookId = bookId
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.addedAt = now
        self.updatedAt = now
    }

    public enum Fields {
        public static let id = Field<Source, Int64>("id")
        public static let bookId = Field<Source, Int64>("bookId")
        public static let url = Field<Source, String>("url")
        public static let addedAt = Field<Source, Date>("addedAt")
    }
}

/// A tag on a book. Tag names compare case-insensitively.
public struct Tag: Model, Equatable {
    public static let entity = "tag"
    public static let naturalKey = ["bookId", "name"]

    public var id: Int64?
    public var uuid: UUID
    public var bookId: Int64
    public var name: String
    public var createdAt: Date

    /// `uuid`: nil for a new one.
    public init(bookId: Int64, name: String, now: Date = Date(), uuid: UUID? = nil) {
        self.uuid = uuid ?? UUID()
        self.bookId = bookId
        self.name = name
        self.createdAt = now
    }

    public enum Fields {
        public static let bookId = Field<Tag, Int64>("bookId")
        public static let name = Field<Tag, String>("name")
    }
}

/// The text of one page of a book, as poppler extracts it. The store indexes the words of its
/// folded form (`SearchableText`, `indexWords`).
public struct PageText: Model, Equatable {
    public static let entity = "page"
    public static let naturalKey = ["bookId", "number"]

    public var id: Int64?
    /// Pages have no identity of their own beyond (book, number); the UUID is not stored.
    public var uuid: UUID {
        get { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
        set {}
    }
    public var bookId: Int64
    /// 1-based.
    public var number: Int
    public var text: String
    /// The words the page index holds for this text (`indexWords` of its folded form, joined by
    /// spaces), when worked out ahead of the write (on all cores, while the book is read); not
    /// stored. A store uses them instead of working them out inside its write transaction.
    public var indexedWords: String?
    /// The page's printed number, as read with its text; stored in the book's `BookGuide`.
    public var label: String?

    enum CodingKeys: String, CodingKey { case id, bookId, number, text }

    /// Equal pages have equal text; `indexedWords` follows from it.
    public static func == (lhs: PageText, rhs: PageText) -> Bool {
        lhs.id == rhs.id && lhs.bookId == rhs.bookId && lhs.number == rhs.number && lhs.text == rhs.text
    }

    /// `indexedWords` worked out for this text.
    public mutating func computeIndexedWords() {
        indexedWords = MarginCore.indexedWords(of: text)
    }

    public init(bookId: Int64, number: Int, text: String) {
        self.bookId = bookId
        self.number = number
        self.text = text
    }

    public enum Fields {
        public static let bookId = Field<PageText, Int64>("bookId")
        public static let number = Field<PageText, Int>("number")
    }
}

/// One version of a book's PDF. The book's `sha256` names the version it serves; older (or,
/// with `refresh --keep-old`, newer) versions stay in the cache.
public struct Version: Model, Equatable {
    public static let entity = "version"
    public static let naturalKey = ["bookId", "sha256"]

    public var id: Int64?
    public var uuid: UUID
    public var bookId: Int64
    public var sha256: String
    public var bytes: Int64
    public var pages: Int
    /// The URL it came from.
    public var source: String?
    public var addedAt: Date

    public init(bookId: Int64, sha256: String, bytes: Int64, pages: Int, source: String?, now: Date = Date()) {
        self.uuid = UUID()
        self.bookId = bookId
        self.sha256 = sha256
        self.bytes = bytes
        self.pages = pages
        self.source = source
        self.addedAt = now
    }

    public enum Fields {
        public static let bookId = Field<Version, Int64>("bookId")
        public static let sha256 = Field<Version, String>("sha256")
        public static let addedAt = Field<Version, Date>("addedAt")
    }
}
