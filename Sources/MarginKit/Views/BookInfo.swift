import Foundation
import MarginCore

/// A book as users and scripts see it (`show`, `list --json`): the contract's book shape.
public struct BookInfo: Sendable, Encodable, Equatable {
    public var book: Book
    public var sources: [String]
    public var tags: [String]
    /// Whether this machine's cache has the PDF (a team library's come from its database the
    /// first time they are opened here).
    public var cached: Bool
    /// The cached PDF's path, or nil when it is not cached.
    public var file: String?

    enum CodingKeys: String, CodingKey {
        case id, uuid, title, author, pages, sha256, bytes, sources, folder, tags, memo
        case addedAt, updatedAt, openedAt, cached, file, encrypted, textlessPages, indexed, addedBy
        case doi, arxiv, year, citationKey, venue, publisher, workType, ocrPages, ocrConfidence, lang
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(book.id ?? 0, forKey: .id)
        try container.encode(book.uuid.uuidString.lowercased(), forKey: .uuid)
        try container.encode(book.title, forKey: .title)
        try container.encode(book.author, forKey: .author)
        try container.encode(book.pages, forKey: .pages)
        try container.encode(book.sha256, forKey: .sha256)
        try container.encode(book.bytes, forKey: .bytes)
        try container.encode(sources, forKey: .sources)
        try container.encode(book.folder, forKey: .folder)
        try container.encode(tags, forKey: .tags)
        try container.encode(book.memo, forKey: .memo)
        try container.encode(isoDate(book.addedAt), forKey: .addedAt)
        try container.encode(isoDate(book.updatedAt), forKey: .updatedAt)
        try container.encode(book.openedAt.map(isoDate), forKey: .openedAt)
        try container.encode(cached, forKey: .cached)
        try container.encode(file, forKey: .file)
        try container.encode(book.password != nil, forKey: .encrypted)
        try container.encode(book.textlessPages, forKey: .textlessPages)
        try container.encode(book.indexedAt != nil, forKey: .indexed)
        try container.encode(book.addedBy, forKey: .addedBy)
        try container.encode(book.doi, forKey: .doi)
        try container.encode(book.arxiv, forKey: .arxiv)
        try container.encode(book.year, forKey: .year)
        try container.encode(book.citationKey, forKey: .citationKey)
        try container.encode(book.venue, forKey: .venue)
        try container.encode(book.publisher, forKey: .publisher)
        try container.encode(book.workType, forKey: .workType)
        try container.encode(book.lang, forKey: .lang)
        try container.encode(book.ocrPages, forKey: .ocrPages)
        try container.encode(book.ocrConfidence.map(roundedConfidence), forKey: .ocrConfidence)
    }
}

extension BookInfo {
    /// Writes this book as `encode(to:)` does through Margin's `JSONEncoder` (keys in byte
    /// order); a test holds the two to the same bytes.
    public func write(to json: inout PrettyJSON) {
        json.beginObject()
        json.key("addedAt")
        json.string(isoDate(book.addedAt))
        json.key("addedBy")
        json.string(book.addedBy)
        json.key("arxiv")
        json.string(book.arxiv)
        json.key("author")
        json.string(book.author)
        json.key("bytes")
        json.integer(book.bytes)
        json.key("cached")
        json.bool(cached)
        json.key("citationKey")
        json.string(book.citationKey)
        json.key("doi")
        json.string(book.doi)
        json.key("encrypted")
        json.bool(book.password != nil)
        json.key("file")
        json.string(file)
        json.key("folder")
        json.string(book.folder)
        json.key("id")
        json.integer(book.id ?? 0)
        json.key("indexed")
        json.bool(book.indexedAt != nil)
        json.key("lang")
        json.string(book.lang)
        json.key("memo")
        json.string(book.memo)
        json.key("ocrConfidence")
        json.number(book.ocrConfidence.map(roundedConfidence))
        json.key("ocrPages")
        json.integer(book.ocrPages)
        json.key("openedAt")
        json.string(book.openedAt.map(isoDate))
        json.key("pages")
        json.integer(book.pages)
        json.key("publisher")
        json.string(book.publisher)
        json.key("sha256")
        json.string(book.sha256)
        json.key("sources")
        json.strings(sources)
        json.key("tags")
        json.strings(tags)
        json.key("textlessPages")
        json.integer(book.textlessPages)
        json.key("title")
        json.string(book.title)
        json.key("updatedAt")
        json.string(isoDate(book.updatedAt))
        json.key("uuid")
        json.string(lowercasedString(of: book.uuid))
        json.key("venue")
        json.string(book.venue)
        json.key("workType")
        json.string(book.workType)
        json.key("year")
        json.integer(book.year)
        json.endObject()
    }

    /// A list of books as `--json` prints it: the same bytes as `JSONEncoder` would write.
    public static func json(_ books: [BookInfo]) -> PrettyJSON {
        PrettyJSON.array(books, bytesEach: 1_024) { $1.write(to: &$0) }
    }
}

/// A mean confidence as books show it: to one decimal.
func roundedConfidence(_ value: Double) -> Double { (value * 10).rounded() / 10 }
