import Foundation

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
        case addedAt, updatedAt, openedAt, cached, file, encrypted, textlessPages, indexed
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
    }
}

/// ISO-8601 with milliseconds, UTC: "2026-11-21T19:53:55.123Z".
/// Milliseconds are truncated, as the database stores them, with a little slack for a value read
/// back as …883.9999 that is really …884: a date prints the same before and after a round trip.
public func isoDate(_ date: Date) -> String {
    let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.001).rounded(.down)
    let exact = Date(timeIntervalSince1970: milliseconds / 1000 + 0.000_000_5)
    return exact.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

/// A URL fit to print or export: a user name and password in it, and the values of query
/// parameters that carry secrets (token, key, signature…), replaced by REDACTED. The library
/// keeps the URL whole, so the PDF can still be fetched again.
public func redactedURL(_ url: String) -> String {
    guard url.contains("@") || url.contains("?"), var parts = URLComponents(string: url) else { return url }
    var changed = false
    if parts.user != nil || parts.password != nil {
        parts.user = "REDACTED"
        parts.password = nil
        changed = true
    }
    if let items = parts.queryItems {
        let secret = [
            "token", "access_token", "auth", "authorization", "key", "apikey", "api_key", "password", "pass", "passwd", "secret",
            "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token", "credential", "session", "sessionid",
        ]
        parts.queryItems = items.map { item in
            guard item.value != nil, secret.contains(item.name.lowercased()) else { return item }
            changed = true
            return URLQueryItem(name: item.name, value: "REDACTED")
        }
    }
    return changed ? (parts.string ?? url) : url
}
