import AsyncHTTPClient
import Foundation
import MarginCore
import NIOCore
import NIOHTTP1

/// A file staged in the cache's `tmp/`, hashed and checked, waiting to be placed.
struct StagedFile: Sendable {
    var path: String
    var sha256: String
    var bytes: Int64
    var head: [UInt8]
    var tail: [UInt8]
    var etag: String?
    var lastModified: String?
}

/// Copies local files and downloads URLs into the cache's `tmp/`, streaming and hashing.
/// On any failure the temporary file is removed.
struct Fetcher: Sendable {
    let store: ContentStore
    let maxSize: Int64
    let client: HTTPClient
    /// Attempts after the first on connection errors, cuts and 5xx (never on 4xx).
    var retries = ProcessInfo.processInfo.environment["MARGIN_RETRIES"].flatMap { Int($0) }.map { max(0, $0) } ?? 3
    /// Told about each download's progress (a progress bar), if anyone listens.
    var progress: (any DownloadProgress)?
    /// The longest one download may take, all attempts together; nil for no limit.
    var timeout: Double?

    static let userAgent = "margin/\(MarginVersion.current)"

    /// Seconds without a byte from the server before an attempt is given up (and retried).
    static var idleTimeout: Int64 {
        ProcessInfo.processInfo.environment["MARGIN_IDLE_TIMEOUT"].flatMap { Int64($0) }.map { max(1, $0) } ?? 30
    }

    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 10, allowCycles: false),
            timeout: .init(connect: .seconds(15), read: .seconds(idleTimeout)))
        configuration.decompression = .disabled
        // A refused connection fails at once; Margin's own retries (with notes) take over.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Copies the local file at `path` in 1 MiB chunks.
    func stageLocal(path: String) throws -> StagedFile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw MarginError.noSuchFile(path)
        }
        guard !isDirectory.boolValue else { throw MarginError.isDirectory(path) }
        // Too large is known before a byte is copied.
        if let size = fileSize(path), size > maxSize { throw MarginError.tooLarge(url: path, limit: maxSize, size: size) }
        let staged = try store.makeTemporaryFile()
        do {
            let file = try HashingFile(path: staged)
            try forEachChunk(ofFile: path) { chunk in
                if file.count + Int64(chunk.count) > maxSize {
                    throw MarginError.tooLarge(url: path, limit: maxSize, size: fileSize(path))
                }
                try file.write(chunk)
            }
            let sha = try file.finish()
            return StagedFile(path: staged, sha256: sha, bytes: file.count, head: file.head, tail: file.tail)
        } catch {
            try? FileManager.default.removeItem(atPath: staged)
            throw error
        }
    }
}

/// Whether a connection failed because the server's TLS certificate isn't trusted.
func isTLSFailure(_ error: any Error) -> Bool {
    let text = String(reflecting: error)
    return text.contains("NIOSSL") || text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("handshakeFailed")
        || text.contains("certificate")
}

/// Whether a connection error will be the same on a second try: redirects that loop or go on
/// too long, a host name that doesn't resolve.
func isPermanent(_ error: any Error) -> Bool {
    if let error = error as? HTTPClientError, error == .redirectCycleDetected || error == .redirectLimitReached {
        return true
    }
    return describe(error) == "the host name could not be resolved"
}

/// A short, human description of a connection error.
func describe(_ error: any Error) -> String {
    if isTLSFailure(error) {
        let text = String(reflecting: error)
        if text.contains("self signed") || text.contains("self-signed") || text.contains("SELF_SIGNED") {
            return "the server's TLS certificate is self-signed, so it can't be trusted"
        }
        if text.contains("expired") || text.contains("EXPIRED") { return "the server's TLS certificate has expired" }
        if text.contains("hostname") || text.contains("HOSTNAME") || text.contains("unableToValidateCertificate") {
            return "the server's TLS certificate is not valid for this host name"
        }
        return "the TLS handshake failed: the server's certificate is not trusted"
    }
    if let error = error as? HTTPClientError {
        switch error {
        case .redirectCycleDetected: return "the server's redirects form a loop"
        case .redirectLimitReached: return "more than 10 redirects"
        case .connectTimeout: return "the connection timed out"
        case .readTimeout: return "the server stopped sending data (read timeout)"
        case .remoteConnectionClosed: return "the server closed the connection"
        default: return "\(error)"
        }
    }
    let text = "\(error)"
    if text.contains("connection refused") || text.contains("Connection refused") {
        return "connection refused"
    }
    if text.lowercased().contains("dns") || text.contains("getaddrinfo") || text.contains("resolve") {
        return "the host name could not be resolved"
    }
    return text
}
