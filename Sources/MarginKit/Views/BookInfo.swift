import Foundation
import MarginCore

/// A book as users and scripts see it (`show`, `list --json`): the contract's book shape.
public struct BookInfo: Sendable, Encodable, Equatable {
    public var book: Book
    public var sources: [String]
    public var tags: [String]
    public var cached: Bool
    /// The cached PDF's path, or nil when it is not cached.
    public var file: String?

    enum CodingKeys: String, CodingKey {
        case id, uuid, title, author, pages, sha256, bytes, sources, folder, tags, memo
        case addedAt, updatedAt, openedAt, cached, file, encrypted, textlessPages, indexed, addedBy
        case doi, arxiv, year, citationKey, venue, publisher
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
    }
}
