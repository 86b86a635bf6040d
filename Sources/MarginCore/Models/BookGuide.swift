import Foundation

/// An entry of a book's outline (its table of contents).
public struct OutlineItem: Codable, Sendable, Equatable {
    public var title: String
    /// 1-based; nil when the entry leads nowhere in the book.
    public var page: Int?
    /// 1 is the top level.
    public var level: Int

    public init(title: String, page: Int?, level: Int) {
        self.title = title
        self.page = page
        self.level = level
    }
}

/// How to find one's way in a book: its outline and the numbers its pages are printed with.
/// Read from the PDF when its text is; one row a book.
public struct BookGuide: Model, Equatable {
    public static let entity = "guide"
    public static let naturalKey = ["bookId"]

    public var id: Int64?
    /// A guide has no identity beyond its book; the UUID is not stored.
    public var uuid: UUID {
        get { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
        set {}
    }
    public var bookId: Int64
    /// The printed page number of each page (`labels[0]` is page 1's), when the PDF labels its
    /// pages other than 1, 2, 3…; nil otherwise.
    public var labels: [String]?
    /// In reading order.
    public var outline: [OutlineItem]

    enum CodingKeys: String, CodingKey { case id, bookId, labels, outline }

    public init(bookId: Int64, labels: [String]?, outline: [OutlineItem]) {
        self.bookId = bookId
        self.outline = outline
        // Labels that only repeat the page numbers say nothing.
        if let labels, labels.enumerated().allSatisfy({ $0.element == String($0.offset + 1) }) {
            self.labels = nil
        } else {
            self.labels = labels
        }
    }

    /// The printed number of page `page`, when the PDF labels its pages; nil otherwise.
    public func label(of page: Int?) -> String? {
        labels.flatMap { Self.label(of: page, in: $0) }
    }

    /// The printed number of page `page` in a book's `labels`; nil for none.
    public static func label(of page: Int?, in labels: [String]) -> String? {
        guard let page, page >= 1, page <= labels.count else { return nil }
        let label = labels[page - 1]
        return label.isEmpty ? nil : label
    }

    /// The deepest outline entry whose pages hold `page`: each level's last entry starting on or
    /// before it, read in order until a top-level entry starts after it. Nil before the first
    /// entry, for a book without an outline, or for no page.
    public func chapter(of page: Int?) -> String? {
        guard let page else { return nil }
        var open = [OutlineItem]()
        for entry in outline {
            guard let start = entry.page else { continue }
            if start > page {
                if entry.level <= 1 { break }
                continue
            }
            open = Array(open.prefix { $0.level < entry.level })
            open.append(entry)
        }
        return open.last?.title
    }

    public enum Fields {
        public static let bookId = Field<BookGuide, Int64>("bookId")
    }

    /// From a store's row, whose `labels` and `outline` are JSON text, or from JSON (a helper's
    /// answer), where they are arrays. A store's texts are decoded once a process for each text
    /// (a guide is read for every search hit and annotation shown, and changes only when its
    /// book is read again: `serve` spent a quarter of its time decoding the same guides);
    /// `MARGIN_PLAIN=guide-cache` decodes every time.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(Int64.self, forKey: .id)
        bookId = try container.decode(Int64.self, forKey: .bookId)
        if let text = try? container.decodeIfPresent(String.self, forKey: .labels) {
            labels = Self.labels(json: text)
        } else {
            labels = try container.decodeIfPresent([String].self, forKey: .labels)
        }
        if let text = try? container.decode(String.self, forKey: .outline) {
            do {
                outline = try Self.outlineTexts.decode(text)
            } catch {
                throw DamagedGuide(bookId: bookId)
            }
        } else {
            outline = try container.decode([OutlineItem].self, forKey: .outline)
        }
    }

    /// A book's page labels from a store's JSON text, decoded once a process (as a guide's); nil
    /// when the text is no list of texts (written by hand or by another tool): the labels only
    /// name the pages, which are then shown by number, and a search or `toc` goes on.
    public static func labels(json text: String) -> [String]? {
        try? labelTexts.decode(text)
    }

    static let labelTexts = DecodedJSONTexts<[String]>()
    static let outlineTexts = DecodedJSONTexts<[OutlineItem]>()
}

/// A book's outline as a store holds it is not the JSON margin writes (changed by hand or by
/// another tool).
public struct DamagedGuide: Error, LocalizedError, Sendable {
    public var bookId: Int64

    public var errorDescription: String? {
        "the outline stored for book \(bookId) is damaged (not the JSON margin writes); restore the library "
            + "from a copy, or remove the book and add it again"
    }
}

/// JSON texts decoded once: each text's value kept, up to 16 MiB of texts (then all are let go).
final class DecodedJSONTexts<Value: Decodable & Sendable>: @unchecked Sendable {
    static var limit: Int { 16 << 20 }
    static var isOn: Bool { FastPaths.isOn("guide-cache") }
    private let lock = NSLock()
    private var values = [RawText: Value]()
    private var bytes = 0

    /// How many texts are kept.
    var count: Int { lock.withLock { values.count } }

    /// Whether `text` is kept.
    func holds(_ text: String) -> Bool { lock.withLock { values[RawText(text)] != nil } }

    func decode(_ text: String) throws -> Value {
        guard Self.isOn else { return try JSONDecoder().decode(Value.self, from: Data(text.utf8)) }
        let key = RawText(text)
        if let known = lock.withLock({ values[key] }) { return known }
        let value = try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        lock.withLock {
            if bytes + text.utf8.count > Self.limit {
                values.removeAll()
                bytes = 0
            }
            if values.updateValue(value, forKey: key) == nil { bytes += text.utf8.count }
        }
        return value
    }
}

/// A text as a key by its UTF-8 bytes: a `String` key hashes its text normalized (NFC), which for
/// a long outline cost more than the rest of finding it (4 % of `serve`'s time under searches).
/// Texts equal as bytes are the same JSON; canonically equal texts of other bytes are only two
/// keys for one value.
struct RawText: Hashable, Sendable {
    var text: String

    init(_ text: String) {
        self.text = text
        self.text.makeContiguousUTF8()
    }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    static func == (a: RawText, b: RawText) -> Bool {
        var (a, b) = (a.text, b.text)
        return a.withUTF8 { x in
            b.withUTF8 { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}

/// What a PDF says it is, from its metadata (the document information, XMP) and its first pages:
/// each field nil when nothing says.
public struct FoundMetadata: Codable, Sendable, Equatable {
    public var title: String?
    public var author: String?
    public var doi: String?
    public var arxiv: String?
    public var year: Int?
    public var venue: String?
    /// Where the title came from: "metadata", "xmp" or "page".
    public var titleSource: String?
    /// Where the year came from: `YearSource.document` (stated or printed) or `.file` (the
    /// PDF's creation date).
    public var yearSource: String?

    public init(
        title: String? = nil, author: String? = nil, doi: String? = nil, arxiv: String? = nil, year: Int? = nil,
        venue: String? = nil, titleSource: String? = nil
    ) {
        self.title = title
        self.author = author
        self.doi = doi
        self.arxiv = arxiv
        self.year = year
        self.venue = venue
        self.titleSource = titleSource
    }
}
