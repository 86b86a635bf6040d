import Foundation

/// The size of the file at `path`, or nil when there is none.
public func fileSize(_ path: String) -> Int64? {
    // stat(2), not FileManager's attributes: those look up the owner's and group's names in
    // the user database (nsswitch, /etc/passwd, /etc/group) on every call.
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int64(info.st_size)
}

/// Writes `data` to a new file at `path`, reporting a full disk as such.
public func writeData(_ data: Data, to path: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw writeError(path, errno, folder: path) }
    defer { close(descriptor) }
    try data.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw writeError(path, errno, folder: path)
            }
            offset += written
        }
    }
}

/// Creates an empty file at `path`, user-only, where none is (false if one is, or it can't).
/// In place: Foundation's `FileManager.createFile` writes a `.dat.nosync…` file beside it and
/// renames it, which a kill in between leaves behind.
public func createNewFile(atPath path: String) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    close(descriptor)
    return true
}

/// An error for a failed write, naming a full disk plainly.
public func writeError(_ path: String, _ code: Int32, folder: String) -> MarginError {
    if code == ENOSPC || code == EDQUOT || isDiskFull(at: folder) {
        return .io("cannot write \(path): the disk is full")
    }
    return .io("cannot write \(path): \(String(cString: strerror(code)))")
}

/// Whether the file system holding `path` has (almost) no room left.
public func isDiskFull(at path: String) -> Bool {
    var info = statvfs()
    let folder = (path as NSString).deletingLastPathComponent
    guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return false }
    // A file system of no blocks (/proc, /sys) is not full: it refuses files for its own reasons.
    guard info.f_blocks > 0, info.f_flag & UInt(ST_RDONLY) == 0 else { return false }
    return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 64 * 1024
}

/// `path` made absolute (against the current folder) and standardized: no `.` or `..`
/// components, no repeated or trailing slashes. Foundation's
/// `URL(fileURLWithPath:).standardizedFileURL.path` gives the same here, but its first use in a
/// process asks the runtime about several generic types (each question a scan of every
/// conformance in the executable), and every command opens its library through this.
public func absolutePath(_ path: String) -> String {
    var full = path
    if !path.hasPrefix("/") {
        var folder = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        if getcwd(&folder, folder.count) != nil { full = cString(folder) + "/" + path }
    }
    var parts = [String]()
    for part in full.split(separator: "/") {
        if part == "." { continue }
        if part == ".." {
            if !parts.isEmpty { parts.removeLast() }
            continue
        }
        parts.append(String(part))
    }
    // Strings, not substrings: joining (or appending) substrings asks the runtime about them.
    return "/" + parts.joined(separator: "/")
}

/// The process's environment variables, read from `environ` when first asked. What
/// `ProcessInfo.processInfo.environment` gives, without Foundation building (and bridging) it
/// at each use: ~380,000 instructions each time, more than opening the library's database.
public let environmentVariables: [String: String] = {
    var variables = [String: String]()
    var entry = environ
    while let pointer = entry.pointee {
        let text = String(cString: pointer)
        if let equals = text.firstIndex(of: "=") {
            let name = String(text[..<equals])
            // The first definition of a name wins, as getenv reads it.
            if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
        }
        entry += 1
    }
    return variables
}()

/// The running executable's path (`/proc/self/exe` resolved), or that link when it can't be read.
public func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard readlink("/proc/self/exe", &buffer, buffer.count - 1) > 0 else { return "/proc/self/exe" }
    return cString(buffer)
}

/// The text of a C string held in a buffer (up to its first NUL).
private func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Writes all of `bytes` to a file descriptor (a pipe or a disk may take them in parts),
/// writing again when a signal interrupts. Returns the `errno` of a failed write (EIO for one
/// that wrote nothing), nil when everything was written.
public func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if written == 0 { return EIO }
        offset += written
    }
    return nil
}
