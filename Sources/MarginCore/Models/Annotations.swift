import Foundation

/// A bookmark on a page of a book.
public struct Bookmark: Model, Equatable {
    public static let entity = "bookmark"
    public static let naturalKey = ["uuid"]

    public var id: Int64?
    public var uuid: UUID
    public var bookId: Int64
    /// 1-based.
    public var page: Int
    public var label: String?
    /// The library user (PostgreSQL role) who made it; nil in a personal library, where it is
    /// the library's one user. A team library sets it from the connection's role.
    public var owner: String?
    /// Whether the other users of a team library see it (they never change it).
    public var shared: Bool = false
    public var createdAt: Date
    public var updatedAt: Date

    public init(bookId: Int64, page: Int, label: String?, now: Date = Date()) {
        self.uuid = UUID()
        self.bookId = bookId
        self.page = page
        self.label = label
        self.createdAt = now
        self.updatedAt = now
    }

    public enum Fields {
        public static let id = Field<Bookmark, Int64>("id")
        public static let uuid = Field<Bookmark, UUID>("uuid")
        public static let bookId = Field<Bookmark, Int64>("bookId")
        public static let page = Field<Bookmark, Int>("page")
    }
}

/// Highlighted text on a page: where it is (rects in PDF points, bottom-left origin), what it
/// says, and the text around it to find it again in a new version of the PDF.
public struct Highlight: Model, Equatable {
    public static let entity = "highlight"
    public static let naturalKey = ["uuid"]

    public var id: Int64?
    public var uuid: UUID
    public var bookId: Int64
    public var page: Int
    /// The highlighted text as poppler extracts it from the rects.
    public var text: String
    /// About 32 characters before and after, from the page text.
    public var prefix: String
    public var suffix: String
    /// `[[x0, y0, x1, y1], …]`, one per line.
    public var rects: [[Double]]
    /// `#rrggbb`.
    public var color: String
    public var note: String?
    /// Who made it, when imported from a PDF.
    public var author: String?
    /// True when the text could not be found again in a new version of the PDF.
    public var orphaned: Bool
    /// The library user (PostgreSQL role) who made it; nil in a personal library, where it is
    /// the library's one user. A team library sets it from the connection's role.
    public var owner: String?
    /// Whether the other users of a team library see it (they never change it).
    public var shared: Bool = false
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        bookId: Int64, page: Int, text: String, prefix: String, suffix: String, rects: [[Double]], color: String,
        note: String?, author: String? = nil, now: Date = Date()
    ) {
        self.uuid = UUID()
        self.bookId = bookId
        self.page = page
        self.text = text
        self.prefix = prefix
        self.suffix = suffix
        self.rects = rects
        self.color = color
        self.note = note
        self.author = author
        self.orphaned = false
        self.createdAt = now
        self.updatedAt = now
    }

    /// The top of the highest rect, for reading order (larger is higher on the page).
    public var top: Double { rects.map { $0.count == 4 ? $0[3] : 0 }.max() ?? 0 }

    public enum Fields {
        public static let id = Field<Highlight, Int64>("id")
        public static let uuid = Field<Highlight, UUID>("uuid")
        public static let bookId = Field<Highlight, Int64>("bookId")
        public static let page = Field<Highlight, Int>("page")
    }
}

/// A note: on a page, or on the whole book when `page` is nil.
public struct Memo: Model, Equatable {
    public static let entity = "memo"
    public static let naturalKey = ["uuid"]

    public var id: Int64?
    public var uuid: UUID
    public var bookId: Int64
    public var page: Int?
    public var text: String
    public var author: String?
    /// The library user (PostgreSQL role) who made it; nil in a personal library, where it is
    /// the library's one user. A team library sets it from the connection's role.
    public var owner: String?
    /// Whether the other users of a team library see it (they never change it).
    public var shared: Bool = false
    public var createdAt: Date
    public var updatedAt: Date

    public init(bookId: Int64, page: Int?, text: String, author: String? = nil, now: Date = Date()) {
        self.uuid = UUID()
        self.bookId = bookId
        self.page = page
        self.text = text
        self.author = author
        self.createdAt = now
        self.updatedAt = now
    }

    public enum Fields {
        public static let id = Field<Memo, Int64>("id")
        public static let uuid = Field<Memo, UUID>("uuid")
        public static let bookId = Field<Memo, Int64>("bookId")
        public static let page = Field<Memo, Int?>("page")
    }
}

extension Highlight: SearchableModel {
    /// The highlighted text and the note, as `search --annotations` finds them.
    public var searchText: String { text + " " + (note ?? "") }
}

extension Memo: SearchableModel {
    public var searchText: String { text }
}

/// What bookmarks, highlights and memos have in common: a book, and when they were made and
/// last changed (a backup's merge compares them).
public protocol Annotation: Model, Equatable {
    var bookId: Int64 { get set }
    var owner: String? { get set }
    var shared: Bool { get set }
    var createdAt: Date { get set }
    var updatedAt: Date { get set }
}

extension Bookmark: Annotation {}
extension Highlight: Annotation {}
extension Memo: Annotation {}
