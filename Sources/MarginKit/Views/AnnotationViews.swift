import Foundation
import MarginCore

/// The contract's JSON shapes for annotations: the backup's entry for the annotation (one
/// shape per thing: `Backup.HighlightEntry` and its siblings) plus where it lives in this
/// library: `kind`, `id`, `book` (the book's id) and, in listings across books, `title`.
private struct Placement: Encodable {
    var kind: String
    var id: Int64
    var book: Int64
    var title: String?
}

public struct BookmarkView: Sendable, Encodable, Equatable {
    public var bookmark: Bookmark
    public var title: String?

    public init(_ bookmark: Bookmark, title: String? = nil) {
        self.bookmark = bookmark
        self.title = title
    }

    public func encode(to encoder: any Encoder) throws {
        try Placement(kind: "bookmark", id: bookmark.id ?? 0, book: bookmark.bookId, title: title).encode(to: encoder)
        try Backup.BookmarkEntry(bookmark).encode(to: encoder)
    }
}

public struct HighlightView: Sendable, Encodable, Equatable {
    public var highlight: Highlight
    public var title: String?

    public init(_ highlight: Highlight, title: String? = nil) {
        self.highlight = highlight
        self.title = title
    }

    public func encode(to encoder: any Encoder) throws {
        try Placement(kind: "highlight", id: highlight.id ?? 0, book: highlight.bookId, title: title).encode(
            to: encoder)
        try Backup.HighlightEntry(highlight).encode(to: encoder)
    }
}

public struct MemoView: Sendable, Encodable, Equatable {
    public var memo: Memo
    public var title: String?

    public init(_ memo: Memo, title: String? = nil) {
        self.memo = memo
        self.title = title
    }

    public func encode(to encoder: any Encoder) throws {
        try Placement(kind: "memo", id: memo.id ?? 0, book: memo.bookId, title: title).encode(to: encoder)
        try Backup.MemoEntry(memo).encode(to: encoder)
    }
}

/// Any annotation, for `margin annotations` (reading order).
public enum AnnotationItem: Sendable, Encodable, Equatable {
    case bookmark(Bookmark)
    case highlight(Highlight)
    case memo(Memo)

    public var page: Int? {
        switch self {
        case .bookmark(let b): return b.page
        case .highlight(let h): return h.page
        case .memo(let m): return m.page
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .bookmark(let b): try BookmarkView(b).encode(to: encoder)
        case .highlight(let h): try HighlightView(h).encode(to: encoder)
        case .memo(let m): try MemoView(m).encode(to: encoder)
        }
    }
}
