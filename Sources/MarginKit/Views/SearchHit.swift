import Foundation
import MarginCore

/// One page that matches: the contract's search hit.
/// Written by the synthesized `Encodable`: `page` is null for a book memo, `kind` only on
/// annotation hits, `marked` not at all.
public struct SearchHit: Sendable, Encodable, Equatable {
    public var book: Int64
    public var title: String
    /// 1-based; nil for an annotation on the whole book.
    @Null public var page: Int?
    /// Text around the first match, plain.
    public var snippet: String
    /// The same snippet with the match between `SearchHit.markOpen` and `SearchHit.markClose`.
    public var marked: String
    /// How many times the first term occurs on the page.
    public var matches: Int
    /// For annotation hits: what matched ("memo", "highlight", "bookmark", "book memo").
    public var kind: String?
    /// For a page hit of words: `word` when every term stands on the page as a whole word
    /// somewhere, `piece` when one is only inside words ("art" in "start"). Nil for regular
    /// expressions and annotations.
    public var matchKind: String?
    /// For annotation hits: the annotation's id (what `highlight edit`, `memo edit`, `bookmark
    /// edit` take); nil for a book memo.
    public var annotation: Int64?
    /// The page's printed number ("xii", "A-3"), when the PDF labels its pages.
    @Null public var pageLabel: String?

    public static let markOpen = "\u{1}"
    public static let markClose = "\u{2}"

    enum CodingKeys: String, CodingKey {
        case annotation, book, title, page, pageLabel, snippet, matches, kind, matchKind
    }

    init(book: Int64, title: String, page: Int?, marked: String, matches: Int, kind: String? = nil) {
        self.book = book
        self.title = title
        self.page = page
        self.marked = marked
        self.snippet = marked.replacingAll(Self.markOpen, with: "").replacingAll(Self.markClose, with: "")
        self.matches = matches
        self.kind = kind
    }
}

extension SearchHit {
    /// Writes this hit as the synthesized `Encodable` does through Margin's `JSONEncoder` (keys in
    /// byte order, `kind` and `matchKind` only when set); tests hold the two to the same bytes.
    /// `ranges`: a member `ranges` of arrays of integers too (`serve`'s hits: where the matches
    /// are in the snippet).
    public func write(to json: inout PrettyJSON, ranges: [[Int]]? = nil) {
        json.beginObject()
        if let annotation {
            json.key("annotation")
            json.integer(annotation)
        }
        json.key("book")
        json.integer(book)
        if let kind {
            json.key("kind")
            json.string(kind)
        }
        if let matchKind {
            json.key("matchKind")
            json.string(matchKind)
        }
        json.key("matches")
        json.integer(matches)
        json.key("page")
        json.integer(page)
        json.key("pageLabel")
        json.string(pageLabel)
        if let ranges {
            json.key("ranges")
            json.beginArray()
            for range in ranges {
                json.element()
                json.beginArray()
                for bound in range {
                    json.element()
                    json.integer(bound)
                }
                json.endArray()
            }
            json.endArray()
        }
        json.key("snippet")
        json.string(snippet)
        json.key("title")
        json.string(title)
        json.endObject()
    }
}
