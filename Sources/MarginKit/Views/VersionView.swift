import Foundation
import MarginCore

/// A version of a book's PDF, as `book versions --json` shows it.
public struct VersionView: Sendable, Encodable, Equatable {
    public var sha256: String
    public var bytes: Int64
    public var pages: Int
    /// The URL or path it came from (credentials redacted).
    @Null public var source: String?
    public var addedAt: String
    /// The version the book serves.
    public var current: Bool
    /// Its file is in the cache.
    public var cached: Bool
}

extension Library {
    /// The views of a book's versions.
    public func versionViews(_ versions: [Version], of book: Book) -> [VersionView] {
        versions.map { version in
            VersionView(
                sha256: version.sha256, bytes: version.bytes, pages: version.pages,
                source: version.source.map(redactedURL), addedAt: isoDate(version.addedAt),
                current: version.sha256 == book.sha256, cached: blobs.contains(version.sha256))
        }
    }
}
