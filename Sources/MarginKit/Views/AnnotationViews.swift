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
    /// Its page; nil for a memo on the whole book.
    var pageNumber: Int? { get }
    /// The backup's entry for it (the one JSON shape of the annotation), with its page's label
    /// and chapter from the book's guide.
    func entry(in guide: BookGuide?) -> Entry
}

extension Bookmark: AnnotationModel {
    public static let kind = "bookmark"
    public var pageNumber: Int? { page }
    public func entry(in guide: BookGuide?) -> Backup.BookmarkEntry {
        var entry = Backup.BookmarkEntry(self)
        entry.pageLabel = guide?.label(of: page)
        entry.chapter = guide?.chapter(of: page)
        return entry
    }
}

extension Highlight: AnnotationModel {
    public static let kind = "highlight"
    public var pageNumber: Int? { page }
    public func entry(in guide: BookGuide?) -> Backup.HighlightEntry {
        var entry = Backup.HighlightEntry(self)
        entry.pageLabel = guide?.label(of: page)
        entry.chapter = guide?.chapter(of: page)
        return entry
    }
}

extension Memo: AnnotationModel {
    public static let kind = "memo"
    public var pageNumber: Int? { page }
    public func entry(in guide: BookGuide?) -> Backup.MemoEntry {
        var entry = Backup.MemoEntry(self)
        entry.pageLabel = guide?.label(of: page)
        entry.chapter = guide?.chapter(of: page)
        return entry
    }
}

/// The JSON view of one annotation (of any kind), with the title of its book when a listing
/// spans books.
public struct AnnotationView<Annotation: AnnotationModel>: Sendable, Encodable, Equatable {
    public var annotation: Annotation
    public var title: String?
    /// Its book's guide: where its page's label and chapter come from.
    public var guide: BookGuide?

    public init(_ annotation: Annotation, title: String? = nil, guide: BookGuide? = nil) {
        self.annotation = annotation
        self.title = title
        self.guide = guide
    }

    public func encode(to encoder: any Encoder) throws {
        try Placement(kind: Annotation.kind, id: annotation.id ?? 0, book: annotation.bookId, title: title)
            .encode(to: encoder)
        try annotation.entry(in: guide).encode(to: encoder)
    }
}

public typealias BookmarkView = AnnotationView<Bookmark>
public typealias HighlightView = AnnotationView<Highlight>
public typealias MemoView = AnnotationView<Memo>

/// Any annotation, for `margin annotations` (reading order).
public enum AnnotationItem: Sendable, Equatable {
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

    /// Its JSON view, with its book's guide.
    public func view(in guide: BookGuide?) -> AnnotationItemView { AnnotationItemView(item: self, guide: guide) }
}

/// The JSON view of any annotation (`margin annotations --json`).
public struct AnnotationItemView: Sendable, Encodable, Equatable {
    public var item: AnnotationItem
    public var guide: BookGuide?

    public func encode(to encoder: any Encoder) throws {
        switch item {
        case .bookmark(let b): try BookmarkView(b, guide: guide).encode(to: encoder)
        case .highlight(let h): try HighlightView(h, guide: guide).encode(to: encoder)
        case .memo(let m): try MemoView(m, guide: guide).encode(to: encoder)
        }
    }
}

extension Library {
    /// The guides (outline, page labels) of these books, for the books that have one.
    public func guides(of bookIds: some Sequence<Int64>) async throws -> [Int64: BookGuide] {
        let ids = Array(Set(bookIds))
        guard !ids.isEmpty else { return [:] }
        return try await repository.read { store in
            var guides = [Int64: BookGuide]()
            for guide in try store.fetch(Query<BookGuide>().filter(BookGuide.Fields.bookId.isIn(ids))) {
                guides[guide.bookId] = guide
            }
            return guides
        }
    }

    /// The guide of one book, when it has one.
    public func guide(of bookId: Int64) async throws -> BookGuide? {
        try await guides(of: [bookId])[bookId]
    }

    /// Annotations as shown: each with its page's label and chapter (and its book's title, when
    /// `titles` has it).
    public func views<A: AnnotationModel>(_ annotations: [A], titles: [Int64: String] = [:]) async throws
        -> [AnnotationView<A>]
    {
        let guides = try await guides(of: annotations.map(\.bookId))
        return annotations.map { AnnotationView($0, title: titles[$0.bookId], guide: guides[$0.bookId]) }
    }

    /// One annotation as shown, after a change to it: the change is stored, so a library that
    /// can't be reached now leaves out only its page's label and chapter.
    public func view<A: AnnotationModel>(_ annotation: A) async throws -> AnnotationView<A> {
        let guide: BookGuide?
        do {
            guide = try await self.guide(of: annotation.bookId)
        } catch StoreError.unreachable {
            guide = nil
        }
        return AnnotationView(annotation, guide: guide)
    }
}
