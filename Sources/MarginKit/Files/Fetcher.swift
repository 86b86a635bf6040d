import Foundation
import MarginCore

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
                    // A device or a pipe has no size of its own: say how much was read.
                    let known = fileSize(path).flatMap { $0 > maxSize ? $0 : nil }
                    throw MarginError.tooLarge(url: path, limit: maxSize, size: known)
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
