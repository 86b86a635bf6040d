import Foundation
import MarginCore

/// The JSON backup format (`export --format json`): lossless and versioned. Books carry their
/// identity (SHA-256, sources, title, pages) and every annotation with every field.
///
/// Every entry is plain `Codable`: optionals are written as null (`@Null`), so every field is
/// always present. The same entries are the JSON views of annotations (see `Views/`).
public struct Backup: Codable, Sendable, Equatable {
    public static let formatName = "margin-annotations"
    public static let currentVersion = 1

    public var format: String
    public var version: Int
    public var exportedAt: String
    public var books: [BookEntry]

    public struct BookEntry: Codable, Sendable, Equatable {
        public var uuid: String
        public var sha256: String
        public var title: String
        @Null public var author: String?
        public var pages: Int
        public var bytes: Int64
        public var sources: [String]
        @Null public var folder: String?
        public var tags: [String]
        @Null public var memo: String?
        public var addedAt: String
        public var updatedAt: String
        @Null public var doi: String?
        @Null public var arxiv: String?
        @Null public var year: Int?
        @Null public var citationKey: String?
        @Null public var venue: String?
        @Null public var publisher: String?
        /// What kind of work it is (Crossref's type: `journal-article`, `proceedings-article`, …).
        @Null public var workType: String?
        /// The language set by hand (`edit --lang`); nil when margin tells it from the text.
        @Null public var lang: String?
        /// When this library's user last opened it (ISO 8601).
        @Null public var openedAt: String?
        public var bookmarks: [BookmarkEntry]
        public var highlights: [HighlightEntry]
        public var memos: [MemoEntry]
    }

    public struct BookmarkEntry: Codable, Sendable, Equatable {
        public var uuid: String
        public var page: Int
        @Null public var label: String?
        /// Who made it: in a team library, the user (PostgreSQL role); else null.
        @Null public var author: String?
        /// Whether the other users of a team library see it (false elsewhere).
        @Null public var shared: Bool?
        /// The printed number of its page and the deepest outline entry holding it (from the
        /// book's PDF; a restore ignores them).
        @Null public var pageLabel: String?
        @Null public var chapter: String?
        public var createdAt: String
        public var updatedAt: String
    }

    public struct HighlightEntry: Codable, Sendable, Equatable {
        public var uuid: String
        public var page: Int
        public var text: String
        public var prefix: String
        public var suffix: String
        public var rects: [[Double]]
        public var color: String
        @Null public var note: String?
        /// Who made it: the name a PDF viewer recorded (for an imported one), or in a team
        /// library the user (PostgreSQL role); else null.
        @Null public var author: String?
        @Null public var shared: Bool?
        public var orphaned: Bool
        /// The printed number of its page and the deepest outline entry holding it (from the
        /// book's PDF; a restore ignores them).
        @Null public var pageLabel: String?
        @Null public var chapter: String?
        public var createdAt: String
        public var updatedAt: String
    }

    public struct MemoEntry: Codable, Sendable, Equatable {
        public var uuid: String
        @Null public var page: Int?
        public var text: String
        @Null public var author: String?
        @Null public var shared: Bool?
        /// The printed number of its page and the deepest outline entry holding it (from the
        /// book's PDF; a restore ignores them).
        @Null public var pageLabel: String?
        @Null public var chapter: String?
        public var createdAt: String
        public var updatedAt: String
    }

    enum CodingKeys: String, CodingKey { case format, version, exportedAt, books }
}

// The one mapping from the models to the backup's entries.

extension Backup.BookEntry {
    public init(
        _ book: Book, sources: [String], tags: [String], bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo],
        guide: BookGuide? = nil
    ) {
        self.init(
            uuid: book.uuid.uuidString.lowercased(), sha256: book.sha256, title: book.title, author: book.author,
            pages: book.pages, bytes: book.bytes, sources: sources, folder: book.folder, tags: tags, memo: book.memo,
            addedAt: isoDate(book.addedAt), updatedAt: isoDate(book.updatedAt), doi: book.doi, arxiv: book.arxiv,
            year: book.year, citationKey: book.citationKey, venue: book.venue, publisher: book.publisher,
            workType: book.workType, lang: book.userFields.contains("lang") ? book.lang : nil,
            openedAt: book.openedAt.map(isoDate),
            bookmarks: bookmarks.map { $0.entry(in: guide) }, highlights: highlights.map { $0.entry(in: guide) },
            memos: memos.map { $0.entry(in: guide) })
    }
}

extension Backup.BookmarkEntry {
    public init(_ bookmark: Bookmark) {
        self.init(
            uuid: bookmark.uuid.uuidString.lowercased(), page: bookmark.page, label: bookmark.label,
            author: bookmark.owner, shared: bookmark.shared, pageLabel: nil, chapter: nil,
            createdAt: isoDate(bookmark.createdAt),
            updatedAt: isoDate(bookmark.updatedAt))
    }
}

extension Backup.HighlightEntry {
    public init(_ highlight: Highlight) {
        self.init(
            uuid: highlight.uuid.uuidString.lowercased(), page: highlight.page, text: highlight.text,
            prefix: highlight.prefix, suffix: highlight.suffix, rects: highlight.rects, color: highlight.color,
            note: highlight.note, author: highlight.author ?? highlight.owner, shared: highlight.shared,
            orphaned: highlight.orphaned, pageLabel: nil, chapter: nil,
            createdAt: isoDate(highlight.createdAt), updatedAt: isoDate(highlight.updatedAt))
    }
}

extension Backup.MemoEntry {
    public init(_ memo: Memo) {
        self.init(
            uuid: memo.uuid.uuidString.lowercased(), page: memo.page, text: memo.text,
            author: memo.author ?? memo.owner, shared: memo.shared, pageLabel: nil, chapter: nil,
            createdAt: isoDate(memo.createdAt),
            updatedAt: isoDate(memo.updatedAt))
    }
}

/// Parses the ISO-8601 dates the backup writes (with or without fractional seconds), to the
/// millisecond. The database keeps milliseconds by truncation, so the value is nudged a
/// microsecond past the millisecond: "…16.884Z" is stored, and exported again, as .884.
func parseISODate(_ text: String) -> Date? {
    guard
        let date = (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle()))
    else { return nil }
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    return Date(timeIntervalSince1970: milliseconds / 1000 + 0.000_001)
}
