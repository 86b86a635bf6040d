import Foundation

/// Fetches a URL into a temporary file of the cache, streamed and hashed. The use cases reach the
/// network only through this port: the HTTP implementation lives in MarginKit, and tests of the
/// use cases inject one that fails the test if anything tries to download.
public protocol Downloader: Sendable {
    func download(_ request: DownloadRequest) async throws -> DownloadResult
    /// A small answer (a metadata service's JSON or XML) read whole into memory: at most
    /// `maxSize` bytes within `timeout` seconds. Any status comes back; failing to connect or
    /// to finish in time throws.
    func fetch(_ url: String, accept: String, timeout: Double, maxSize: Int) async throws -> WebAnswer
}

/// What a server answered to `Downloader.fetch`.
public struct WebAnswer: Sendable {
    public var status: Int
    public var contentType: String?
    public var body: Data

    public init(status: Int, contentType: String?, body: Data) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

extension Downloader {
    /// A downloader that doesn't fetch small answers (a test's) reaches nothing.
    public func fetch(_ url: String, accept: String, timeout: Double, maxSize: Int) async throws -> WebAnswer {
        throw MarginError.unreachable(url: url, reason: "this downloader reaches no network")
    }
}

/// One download: where from, into which cache, within which limits.
public struct DownloadRequest: Sendable {
    public var url: String
    /// The cache folder; the file is staged in its `tmp/`.
    public var cache: String
    /// Send `If-None-Match` / `If-Modified-Since` with these; a 304 transfers nothing.
    public var revalidate: Validators?
    /// More bytes than this is refused.
    public var maxSize: Int64
    /// The longest the download may take, all attempts together; nil for no limit.
    public var timeout: Double?
    /// Told how the download is going (a progress bar), if anyone listens.
    public var progress: (any DownloadProgress)?

    public init(
        url: String, cache: String, revalidate: Validators? = nil, maxSize: Int64, timeout: Double? = nil,
        progress: (any DownloadProgress)? = nil
    ) {
        self.url = url
        self.cache = cache
        self.revalidate = revalidate
        self.maxSize = maxSize
        self.timeout = timeout
        self.progress = progress
    }
}

/// Validators a server gave for a URL's content.
public struct Validators: Codable, Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// Someone who wants to know how downloads are going (the CLI's progress bars).
public protocol DownloadProgress: Sendable {
    func started(_ url: String, total: Int64?, resumedAt: Int64)
    func received(_ url: String, bytes: Int64)
    func finished(_ url: String)
    /// An attempt failed in a way worth another; the next starts after `delay` seconds.
    func retrying(_ url: String, attempt: Int, of attempts: Int, after delay: Double, reason: String)
}

extension DownloadProgress {
    public func retrying(_ url: String, attempt: Int, of attempts: Int, after delay: Double, reason: String) {}
}

/// What a download came to.
public enum DownloadResult: Sendable {
    /// The server said 304: what we have is current.
    case notModified(Validators)
    case staged(StagedFile)
}

/// A file staged in the cache's `tmp/`, hashed and checked, waiting to be placed.
public struct StagedFile: Sendable {
    public var path: String
    public var sha256: String
    public var bytes: Int64
    public var head: [UInt8]
    public var tail: [UInt8]
    public var etag: String?
    public var lastModified: String?

    public init(
        path: String, sha256: String, bytes: Int64, head: [UInt8], tail: [UInt8], etag: String? = nil,
        lastModified: String? = nil
    ) {
        self.path = path
        self.sha256 = sha256
        self.bytes = bytes
        self.head = head
        self.tail = tail
        self.etag = etag
        self.lastModified = lastModified
    }
}
