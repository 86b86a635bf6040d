import AsyncHTTPClient
import Foundation
import MarginCore
import NIOCore
import NIOHTTP1

/// Copies local files, and downloads URLs through the `Downloader` port, into the cache's `tmp/`,
/// streaming and hashing. On any failure the temporary file is removed.
struct Fetcher: Sendable {
    let store: any BlobStore
    let maxSize: Int64
    let downloader: any Downloader
    /// Told about each download's progress (a progress bar), if anyone listens.
    var progress: (any DownloadProgress)?
    /// The longest one download may take, all attempts together; nil for no limit.
    var timeout: Double?

    /// Downloads `url` into the cache's `tmp/` (see `HTTPDownloader`).
    func download(url: String, revalidate: Validators? = nil) async throws -> DownloadResult {
        try await downloader.download(
            DownloadRequest(
                url: url, cache: store.root, revalidate: revalidate, maxSize: maxSize, timeout: timeout,
                progress: progress))
    }

    /// Downloads `url` and insists on content (no revalidation).
    func stageDownload(url: String) async throws -> StagedFile {
        switch try await download(url: url) {
        case .staged(let staged): return staged
        case .notModified: throw MarginError.io("\(url): the server answered 304 to a plain request")
        }
    }

    /// Copies the local file at `path` in 1 MiB chunks.
    func stageLocal(path: String) throws -> StagedFile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw MarginError.noSuchFile(path)
        }
        guard !isDirectory.boolValue else { throw MarginError.isDirectory(path) }
        // Too large is known before a byte is copied.
        if let size = fileSize(path), size > maxSize {
            throw MarginError.tooLarge(url: path, limit: maxSize, size: size)
        }
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
