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

/// A bookmark, highlight or memo as it is shown: its backup entry and its place.
public protocol AnnotationModel: Model, Equatable {
    associatedtype Entry: Encodable
    /// "bookmark", "highlight" or "memo".
    static var kind: String { get }
    var bookId: Int64 { get }
    /// The backup's entry for it (the one JSON shape of the annotation).
    var entry: Entry { get }
}

extension Bookmark: AnnotationModel {
    public static let kind = "bookmark"
    public var entry: Backup.BookmarkEntry { Backup.BookmarkEntry(self) }
}

extension Highlight: AnnotationModel {
    public static let kind = "highlight"
    public var entry: Backup.HighlightEntry { Backup.HighlightEntry(self) }
}

extension Memo: AnnotationModel {
    public static let kind = "memo"
    public var entry: Backup.MemoEntry { Backup.MemoEntry(self) }
}

/// The JSON view of one annotation (of any kind), with the title of its book when a listing
/// spans books.
public struct AnnotationView<Annotation: AnnotationModel>: Sendable, Encodable, Equatable {
    public var annotation: Annotation
    public var title: String?

    public init(_ annotation: Annotation, title: String? = nil) {
        self.annotation = annotation
        self.title = title
    }

    public func encode(to encoder: any Encoder) throws {
        try Placement(kind: Annotation.kind, id: annotation.id ?? 0, book: annotation.bookId, title: title)
            .encode(to: encoder)
        try annotation.entry.encode(to: encoder)
    }
}

public typealias BookmarkView = AnnotationView<Bookmark>
public typealias HighlightView = AnnotationView<Highlight>
public typealias MemoView = AnnotationView<Memo>

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
