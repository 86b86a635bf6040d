import Foundation
import MarginCore

/// The contract's JSON shapes for annotations: `book` is the book's id, dates are ISO-8601.
public struct BookmarkView: Sendable, Encodable, Equatable {
    public var bookmark: Bookmark
    public var title: String?

    public init(_ bookmark: Bookmark, title: String? = nil) {
        self.bookmark = bookmark
        self.title = title
    }

    enum Keys: String, CodingKey { case id, uuid, book, title, page, label, createdAt, updatedAt, kind }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode("bookmark", forKey: .kind)
        try c.encode(bookmark.id ?? 0, forKey: .id)
        try c.encode(bookmark.uuid.uuidString.lowercased(), forKey: .uuid)
        try c.encode(bookmark.bookId, forKey: .book)
        try c.encodeIfPresent(title, forKey: .title)
        try c.encode(bookmark.page, forKey: .page)
        try c.encode(bookmark.label, forKey: .label)
        try c.encode(isoDate(bookmark.createdAt), forKey: .createdAt)
        try c.encode(isoDate(bookmark.updatedAt), forKey: .updatedAt)
    }
}

public struct HighlightView: Sendable, Encodable, Equatable {
    public var highlight: Highlight
    public var title: String?

    public init(_ highlight: Highlight, title: String? = nil) {
        self.highlight = highlight
        self.title = title
    }

    enum Keys: String, CodingKey {
        case id, uuid, book, title, page, text, prefix, suffix, color, note, rects, author, orphaned, createdAt,
            updatedAt, kind
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode("highlight", forKey: .kind)
        try c.encode(highlight.id ?? 0, forKey: .id)
        try c.encode(highlight.uuid.uuidString.lowercased(), forKey: .uuid)
        try c.encode(highlight.bookId, forKey: .book)
        try c.encodeIfPresent(title, forKey: .title)
        try c.encode(highlight.page, forKey: .page)
        try c.encode(highlight.text, forKey: .text)
        try c.encode(highlight.prefix, forKey: .prefix)
        try c.encode(highlight.suffix, forKey: .suffix)
        try c.encode(highlight.color, forKey: .color)
        try c.encode(highlight.note, forKey: .note)
        try c.encode(highlight.rects, forKey: .rects)
        try c.encode(highlight.author, forKey: .author)
        try c.encode(highlight.orphaned, forKey: .orphaned)
        try c.encode(isoDate(highlight.createdAt), forKey: .createdAt)
        try c.encode(isoDate(highlight.updatedAt), forKey: .updatedAt)
    }
}

public struct MemoView: Sendable, Encodable, Equatable {
    public var memo: Memo
    public var title: String?

    public init(_ memo: Memo, title: String? = nil) {
        self.memo = memo
        self.title = title
    }

    enum Keys: String, CodingKey { case id, uuid, book, title, page, text, author, createdAt, updatedAt, kind }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode("memo", forKey: .kind)
        try c.encode(memo.id ?? 0, forKey: .id)
        try c.encode(memo.uuid.uuidString.lowercased(), forKey: .uuid)
        try c.encode(memo.bookId, forKey: .book)
        try c.encodeIfPresent(title, forKey: .title)
        try c.encode(memo.page, forKey: .page)
        try c.encode(memo.text, forKey: .text)
        try c.encode(memo.author, forKey: .author)
        try c.encode(isoDate(memo.createdAt), forKey: .createdAt)
        try c.encode(isoDate(memo.updatedAt), forKey: .updatedAt)
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
