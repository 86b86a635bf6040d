import Crypto
import Foundation
import MarginCore

/// A file being written chunk by chunk while its SHA-256 is computed, so a PDF of any size is
/// never held in memory. Keeps the first and last bytes for the PDF checks.
package final class HashingFile {
    package let path: String
    private let descriptor: Int32
    private var hasher = SHA256()
    package private(set) var count: Int64 = 0
    /// The first 1 KiB written.
    package private(set) var head = [UInt8]()
    /// The last 2 KiB written.
    package private(set) var tail = [UInt8]()
    package static let headSize = 1024
    package static let tailSize = 2048

    /// Opens `path` for writing: emptied, or with `append`, continued after the bytes it holds
    /// (which are hashed first, so the digest covers the whole file).
    package init(path: String, append: Bool = false) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC))
        guard descriptor >= 0 else {
            throw MarginError.io("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        if append {
            try readExisting()
        }
    }

    /// Feeds the bytes already in the file through the hash and the head/tail windows.
    private func readExisting() throws {
        try forEachChunk(ofFile: path) { account($0) }
    }

    private func account(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
        if head.count < Self.headSize {
            head += bytes.prefix(Self.headSize - head.count)
        }
        tail += bytes.suffix(Self.tailSize)
        if tail.count > Self.tailSize { tail.removeFirst(tail.count - Self.tailSize) }
        count += Int64(bytes.count)
    }

    deinit {
        close(descriptor)
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        if let code = writeAll(bytes, to: descriptor) {
            throw MarginError.io("cannot write \(path): \(String(cString: strerror(code)))")
        }
        account(bytes)
    }

    /// Flushes to disk and returns the hex SHA-256 of everything written.
    package func finish() throws -> String {
        guard fsync(descriptor) == 0 else {
            throw MarginError.io("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// Reads a file in 1 MiB chunks, handing each to `body`.
func forEachChunk(ofFile path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
    let input = open(path, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw MarginError.io("cannot read \(path): \(String(cString: strerror(errno)))") }
    defer { close(input) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        let count = read(input, buffer.baseAddress, buffer.count)
        if count < 0 {
            if errno == EINTR { continue }
            throw MarginError.io("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        if count == 0 { return }
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }
}

/// The hex SHA-256 of a file's bytes.
func sha256(ofFile path: String) throws -> String {
    var hasher = SHA256()
    try forEachChunk(ofFile: path) { hasher.update(bufferPointer: $0) }
    return hasher.finalize().map { String(format: "%02x", $0) }.joined()
}
