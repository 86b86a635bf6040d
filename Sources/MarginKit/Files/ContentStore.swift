import Foundation
import MarginCore

/// The on-disk, content-addressed store of PDFs: `pdfs/<2 hex>/<sha256>.pdf` under the cache
/// folder, plus `tmp/` for files being written. A file reaches its final name only by an atomic
/// rename of a complete, verified temporary file.
public struct ContentStore: BlobStore {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    public var temporaryFolder: String { root + "/tmp" }

    /// The path a PDF with this SHA-256 has in the store (whether or not it is there).
    public func path(for sha256: String) -> String {
        "\(root)/pdfs/\(sha256.prefix(2))/\(sha256).pdf"
    }

    /// Whether the store holds a regular file (not a symlink) for this SHA-256.
    public func contains(_ sha256: String) -> Bool {
        isRegularFile(path(for: sha256))
    }

    /// Which of these SHA-256s the store has (a personal library's store is this machine's):
    /// looked up from the open `pdfs/` folder, so each lookup walks two path components, not the
    /// whole path.
    public func cachedHere(_ sha256s: [String]) -> Set<String> {
        let folder = open(root + "/pdfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return [] }
        defer { close(folder) }
        var info = stat()
        return Set(
            sha256s.filter { sha256 in
                fstatat(folder, "\(sha256.prefix(2))/\(sha256).pdf", &info, AT_SYMLINK_NOFOLLOW) == 0
                    && (info.st_mode & S_IFMT) == S_IFREG
            })
    }

    /// Creates the folders, user-only.
    public func prepare() throws {
        for folder in [root, root + "/pdfs", temporaryFolder] {
            try makeFolder(folder)
        }
    }

    /// A new, empty, user-only file in `tmp/` for staging a download or copy.
    public func makeTemporaryFile(suffix: String) throws -> String {
        try prepare()
        // The process id in the name tells `db check` whether its writer is still alive.
        let path = "\(temporaryFolder)/\(getpid())-\(UUID().uuidString.lowercased())\(suffix)"
        guard createNewFile(atPath: path) else {
            throw MarginError.io("cannot create a temporary file in \(temporaryFolder)")
        }
        return path
    }

    /// Removes what processes that are gone left in `tmp/`: their temporary files and the
    /// locks of their downloads (the partial downloads themselves are kept for resuming).
    /// Returns the paths removed.
    @discardableResult
    public func removeStaleTemporaries() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporaryFolder) else { return [] }
        var removed = [String]()
        for name in names {
            let path = temporaryFolder + "/" + name
            if let owner = temporaryFileOwner(name), !processIsAlive(owner) {
                if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append(path) }
            } else if name.hasSuffix(".lock"), let lock = PartLock(path: path) {
                lock.release()
                removed.append(path)
            }
        }
        return removed
    }

    /// Moves a staged file to its content address. Returns true if the store did not have it
    /// before (the caller then owns removing it if what follows fails).
    public func place(_ staged: String, sha256: String) throws -> Bool {
        let target = path(for: sha256)
        if contains(sha256) {
            try? FileManager.default.removeItem(atPath: staged)
            return false
        }
        try makeFolder((target as NSString).deletingLastPathComponent)
        guard rename(staged, target) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: staged)
            throw MarginError.io("cannot move the PDF into the cache (\(target)): \(reason)")
        }
        return true
    }

    /// Removes the stored file for this SHA-256, if any.
    public func remove(_ sha256: String) {
        try? FileManager.default.removeItem(atPath: path(for: sha256))
    }
}

/// Creates a folder (and its parents) with mode 0700; an existing one is left as it is.
func makeFolder(_ path: String) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw MarginError.io("\(path) exists and is not a folder") }
        return
    }
    do {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
        throw MarginError.io("cannot create the folder \(path): \(error.localizedDescription)")
    }
}

/// True for a regular file; false for a missing path, a folder or a symlink.
package func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
}

/// The process that made a temporary file, from its name (`<pid>-<uuid>.part`, or Foundation's
/// `.dat.nosync<pid in hexadecimal>.XXXXXX` for a file it writes and renames, which a kill in
/// between leaves); nil for other files (such as resumable downloads).
func temporaryFileOwner(_ name: String) -> pid_t? {
    if name.hasPrefix(".dat.nosync") {
        let rest = name.dropFirst(".dat.nosync".count)
        guard let dot = rest.firstIndex(of: ".") else { return nil }
        return pid_t(rest[..<dot], radix: 16)
    }
    guard let dash = name.firstIndex(of: "-"), let pid = pid_t(name[..<dash]) else { return nil }
    return pid
}

/// Whether a process is running.
func processIsAlive(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
}
