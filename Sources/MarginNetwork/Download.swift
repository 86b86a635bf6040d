import AsyncHTTPClient
import Crypto
import Foundation
import MarginCore
import MarginKit
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// What a `.part` file is the beginning of, kept beside it as JSON so that the next run can
/// ask for the rest with `Range` + `If-Range`.
private struct PartInfo: Codable {
    var url: String
    var validators: Validators
    var total: Int64?
}

/// Errors worth another attempt: connection trouble, a cut mid-body, 5xx.
private struct Retryable: Error {
    var error: MarginError
    /// The server went silent (a read timeout): worth one more try, not three.
    var silent = false
}

/// Whether a connection error is the server going silent.
private func isSilence(_ error: any Error) -> Bool {
    (error as? HTTPClientError) == .readTimeout
}

/// The `Downloader` over HTTP(S), with AsyncHTTPClient: one client for the whole process,
/// made on first use with the configuration's timeouts.
public struct HTTPDownloader: Downloader {
    let configuration: Configuration

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    static let userAgent = "margin/\(MarginVersion.current)"

    public func download(_ request: DownloadRequest) async throws -> DownloadResult {
        let transfer = Transfer(
            store: ContentStore(root: request.cache), maxSize: request.maxSize,
            client: SharedHTTPClient.client(idleTimeout: configuration.idleTimeout), configuration: configuration,
            progress: request.progress, timeout: request.timeout)
        return try await transfer.download(url: request.url, revalidate: request.revalidate)
    }

    public func fetch(_ url: String, accept: String, timeout: Double, maxSize: Int) async throws -> WebAnswer {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: politeUserAgent)
        request.headers.add(name: "Accept", value: accept)
        let client = SharedHTTPClient.client(idleTimeout: configuration.idleTimeout)
        let deadline = Date().addingTimeInterval(timeout)
        do {
            // The whole answer, body included, within the time: a server that drips it is cut off
            // (the transfer is cancelled, not waited for).
            let request = request
            let transfer = Task {
                let response = try await client.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
                var body = Data()
                for try await chunk in response.body {
                    body.append(contentsOf: chunk.readableBytesView)
                    guard body.count <= maxSize else {
                        throw MarginError.tooLarge(url: url, limit: Int64(maxSize), size: nil)
                    }
                }
                return WebAnswer(
                    status: Int(response.status.code), contentType: response.headers.first(name: "content-type"),
                    body: body)
            }
            return try await firstOf(transfer, orAfter: timeout) {
                transfer.cancel()
                return MarginError.timedOut(url: url, seconds: timeout)
            }
        } catch let error as MarginError {
            throw error
        } catch {
            if deadline.timeIntervalSinceNow <= 0 || (error as? HTTPClientError) == .deadlineExceeded {
                throw MarginError.timedOut(url: url, seconds: timeout)
            }
            if isTLSFailure(error) { throw MarginError.untrustedTLS(url: url, reason: describe(error)) }
            throw MarginError.unreachable(url: url, reason: describe(error))
        }
    }

    /// What metadata services ask of clients: say who is asking and how to reach them
    /// (Crossref's "polite pool"); `MARGIN_CONTACT` adds an e-mail address.
    var politeUserAgent: String {
        let contact = configuration.contact.map { "; mailto:\($0)" } ?? ""
        return "\(Self.userAgent) (PDF library for the command line\(contact))"
    }
}

/// The process's one HTTP client. It lives until the process exits (a client must be shut down
/// before it is released, and this one never is).
private enum SharedHTTPClient {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: HTTPClient?

    static func client(idleTimeout: Int64) -> HTTPClient {
        lock.lock()
        defer { lock.unlock() }
        if let shared { return shared }
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 10, allowCycles: false),
            timeout: .init(connect: .seconds(15), read: .seconds(idleTimeout)))
        configuration.decompression = .disabled
        // A refused connection fails at once; Margin's own retries (with notes) take over.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        shared = client
        return client
    }
}

/// One download in progress: its attempts, its part file and its limits.
struct Transfer: Sendable {
    let store: ContentStore
    let maxSize: Int64
    let client: HTTPClient
    let configuration: Configuration
    var progress: (any DownloadProgress)?
    var timeout: Double?
    /// Attempts after the first on connection errors, cuts and 5xx (never on 4xx).
    var retries: Int { configuration.retries }

    /// Where the partial download of `url` lives in the cache's `tmp/`.
    func partPath(for url: String) -> String {
        let digest = SHA256.hash(data: Data(url.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
        return "\(store.temporaryFolder)/download-\(digest).part"
    }

    /// Downloads `url` into the cache's `tmp/`, streamed and hashed.
    ///
    /// - A `.part` left by an interrupted run is continued with `Range` + `If-Range`; the
    ///   download starts over only when the server can't resume or the content changed.
    /// - With `revalidate`, sends `If-None-Match` / `If-Modified-Since`; a 304 transfers nothing.
    /// - Retries connection errors, cuts and 5xx with backoff; never 4xx.
    func download(url: String, revalidate: Validators? = nil) async throws -> DownloadResult {
        try store.prepare()
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var attempt = 0
        var silences = 0
        while true {
            do {
                return try await attemptDownload(url: url, revalidate: revalidate, deadline: deadline)
            } catch let failure as Retryable {
                let delay = configuration.retryDelay * pow(2, Double(attempt))
                if failure.silent { silences += 1 }
                guard attempt < retries, silences < 2, deadline.map({ Date().addingTimeInterval(delay) < $0 }) ?? true
                else {
                    throw failure.error
                }
                attempt += 1
                progress?.retrying(
                    url, attempt: attempt + 1, of: retries + 1, after: delay,
                    reason: failure.error.errorDescription?.replacingOccurrences(
                        of: "cannot reach \(redactedURL(url)): ", with: "") ?? "failed")
                try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            }
        }
    }

    private func attemptDownload(url: String, revalidate: Validators?, deadline: Date?) async throws -> DownloadResult {
        // The resumable part of a URL belongs to one download at a time; a second download of the
        // same URL (another process, or the same command) writes a private part of its own.
        let lock = PartLock(path: partPath(for: url) + ".lock")
        defer { lock?.release() }
        let part = lock != nil ? partPath(for: url) : try store.makeTemporaryFile()
        if lock == nil { try? FileManager.default.removeItem(atPath: part) }
        let infoPath = part + ".json"
        let existing = isRegularFile(part) ? (fileSize(part) ?? 0) : 0
        let info = existing > 0 ? readPartInfo(infoPath, url: url) : nil
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: HTTPDownloader.userAgent)
        request.headers.add(name: "Accept", value: "application/pdf, */*;q=0.8")
        let resumeFrom: Int64? = {
            guard let info, let validator = info.validators.etag ?? info.validators.lastModified else { return nil }
            request.headers.add(name: "Range", value: "bytes=\(existing)-")
            request.headers.add(name: "If-Range", value: validator)
            return existing
        }()
        if resumeFrom == nil, let revalidate {
            if let etag = revalidate.etag { request.headers.add(name: "If-None-Match", value: etag) }
            if let lastModified = revalidate.lastModified {
                request.headers.add(name: "If-Modified-Since", value: lastModified)
            }
        }
        let response: HTTPClientResponse
        let remaining = deadline.map { max(0.001, $0.timeIntervalSinceNow) } ?? 86400
        do {
            response = try await client.execute(request, timeout: .milliseconds(Int64(remaining * 1000)))
        } catch {
            if let timeout, deadline.map({ $0.timeIntervalSinceNow <= 0 }) ?? false {
                throw MarginError.timedOut(url: url, seconds: timeout)
            }
            // A certificate the system doesn't trust won't be trusted on a second try, nor will
            // redirects that loop or a host name that doesn't exist.
            if isTLSFailure(error) { throw MarginError.untrustedTLS(url: url, reason: describe(error)) }
            if isPermanent(error) { throw MarginError.unreachable(url: url, reason: describe(error)) }
            throw Retryable(error: .unreachable(url: url, reason: describe(error)), silent: isSilence(error))
        }
        let validators = Validators(
            etag: response.headers.first(name: "etag"), lastModified: response.headers.first(name: "last-modified"))
        let status = Int(response.status.code)
        var append = false
        var total = response.headers.first(name: "content-length").flatMap { Int64($0) }
        switch status {
        case 304 where revalidate != nil && resumeFrom == nil:
            return .notModified(validators.isEmpty ? revalidate ?? validators : validators)
        case 206:
            // "bytes START-END/TOTAL": continue only from exactly where the part ends.
            let range = response.headers.first(name: "content-range") ?? ""
            let numbers = range.split { !$0.isNumber }.compactMap { Int64($0) }
            guard let resumeFrom, numbers.count >= 2, numbers[0] == resumeFrom else {
                discardPart(part)
                throw Retryable(error: .incompleteDownload(url: url, expected: -1, received: 0))
            }
            append = true
            total = numbers.count >= 3 ? numbers[2] : nil
        case 416:
            discardPart(part)
            throw Retryable(error: .httpStatus(url: url, code: 416, reason: "Range Not Satisfiable"))
        case 200..<300:
            break
        case 500..<600:
            throw Retryable(error: .httpStatus(url: url, code: status, reason: response.status.reasonPhrase))
        default:
            throw MarginError.httpStatus(url: url, code: status, reason: response.status.reasonPhrase)
        }
        if let total, total > maxSize {
            throw MarginError.tooLarge(url: url, limit: maxSize, size: total)
        }
        if !append {
            discardPart(part)
            try? writeData(Data(), to: part)
        }
        // Without validators (or without the lock) a part can't be resumed safely, so it isn't kept.
        let resumable = !validators.isEmpty && lock != nil
        if resumable {
            writePartInfo(PartInfo(url: url, validators: validators, total: total), to: infoPath)
        }
        let file = try HashingFile(path: part, append: append)
        progress?.started(url, total: total, resumedAt: file.count)
        defer { progress?.finished(url) }
        // A server that keeps the connection alive but hardly sends (a byte a second) is given
        // up when a whole window brings less than 1 KiB a second (curl's --speed-limit 1024
        // --speed-time 60): at that pace a 10 MB paper would take three hours.
        let window = configuration.stallWindow
        var windowStart = Date()
        var windowBytes: Int64 = 0
        do {
            for try await chunk in response.body {
                windowBytes += Int64(chunk.readableBytes)
                if Date().timeIntervalSince(windowStart) >= window {
                    if windowBytes < Int64(1024 * window) {
                        try chunk.withUnsafeReadableBytes { try file.write($0) }
                        if !resumable { discardPart(part) }
                        throw MarginError.stalled(url: url, bytes: windowBytes, seconds: window)
                    }
                    windowStart = Date()
                    windowBytes = 0
                }
                if let deadline, let timeout, Date() > deadline {
                    // Slower than the whole download may take (a server dripping a byte at a time).
                    if !resumable { discardPart(part) }
                    throw MarginError.timedOut(url: url, seconds: timeout)
                }
                if file.count + Int64(chunk.readableBytes) > maxSize {
                    discardPart(part)
                    throw MarginError.tooLarge(url: url, limit: maxSize, size: total)
                }
                try chunk.withUnsafeReadableBytes { try file.write($0) }
                progress?.received(url, bytes: file.count)
            }
        } catch let error as MarginError {
            throw error
        } catch {
            if !resumable { discardPart(part) }
            throw Retryable(
                error: .incompleteDownload(url: url, expected: total ?? -1, received: file.count),
                silent: isSilence(error))
        }
        if let total, file.count != total {
            if !resumable { discardPart(part) }
            throw Retryable(error: .incompleteDownload(url: url, expected: total, received: file.count))
        }
        let sha = try file.finish()
        // The whole file: hand it over under a name of its own.
        let staged = try store.makeTemporaryFile()
        guard rename(part, staged) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: staged)
            throw MarginError.io("cannot move \(part): \(reason)")
        }
        try? FileManager.default.removeItem(atPath: infoPath)
        return .staged(
            StagedFile(
                path: staged, sha256: sha, bytes: file.count, head: file.head, tail: file.tail, etag: validators.etag,
                lastModified: validators.lastModified))
    }

    private func discardPart(_ part: String) {
        try? FileManager.default.removeItem(atPath: part)
        try? FileManager.default.removeItem(atPath: part + ".json")
    }

    private func readPartInfo(_ path: String, url: String) -> PartInfo? {
        guard let data = FileManager.default.contents(atPath: path),
            let info = try? JSONDecoder().decode(PartInfo.self, from: data), info.url == url
        else { return nil }
        return info
    }

    private func writePartInfo(_ info: PartInfo, to path: String) {
        guard let data = try? JSONEncoder().encode(info) else { return }
        // In place (a kill mid-write leaves an info that doesn't decode: the part is not resumed).
        try? writeData(data, to: path)
    }
}

/// The task's result, or `late()`'s error when it takes longer than `seconds`; the task is
/// not waited for after that.
func firstOf<T: Sendable>(
    _ task: Task<T, any Error>, orAfter seconds: Double, _ late: @escaping @Sendable () -> any Error
) async throws -> T {
    let once = NIOLockedValueBox(false)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        @Sendable func finish(_ result: Result<T, any Error>) {
            let first = once.withLockedValue { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(with: result) }
        }
        Task {
            do { finish(.success(try await task.value)) } catch { finish(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            finish(.failure(late()))
        }
    }
}
