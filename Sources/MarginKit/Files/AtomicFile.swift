import Foundation
import MarginCore

/// What a written file must look like to count as whole. Writers that report no error on a full
/// disk (poppler's save, cairo's stream close) are caught here.
public enum FileCheck: Sendable {
    /// Exactly this many bytes.
    case bytes(Int)
    /// A PDF that ends with `%%EOF` and opens with poppler (with this many pages, if given).
    case pdf(pages: Int?, password: String? = nil)
    /// A PNG that ends with its IEND chunk.
    case png
    /// An SVG document that ends with `</svg>`.
    case svg
}

/// Files written so that each is either complete or absent, and several are written all or
/// nothing: every file is first written to a temporary beside its target, checked and synced;
/// only when all are good are they renamed over their targets. An existing target is refused
/// unless `force`. Temporaries of a process that died are removed by the next writer.
public final class AtomicFiles {
    private let force: Bool
    private var staged = [(temporary: String, target: String)]()
    private var committed = false

    public init(force: Bool) {
        self.force = force
    }

    deinit {
        if !committed { abort() }
    }

    /// Writes one file to a temporary beside `path` with `write` and checks it.
    /// Returns the absolute target path.
    @discardableResult
    public func stage(_ path: String, check: FileCheck? = nil, _ write: (String) throws -> Void) throws -> String {
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        let folder = (target as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw MarginError.invalidArgument("\(path) is a folder; give a file name") }
            if !force { throw MarginError.fileExists(path) }
        }
        if staged.contains(where: { $0.target == target }) {
            throw MarginError.invalidArgument("\(path) would be written twice by one command")
        }
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MarginError.io("cannot write \(path): the folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            throw MarginError.io("cannot write \(path): the folder \(folder) is not writable")
        }
        removeStaleTemporaries(in: folder)
        let name = (target as NSString).lastPathComponent
        let temporary = "\(folder)/.\(name).margin-\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
        // Made here first, so that a place that refuses files (a read-only or special file
        // system) is said in the system's words, whichever library then writes it.
        let probe = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard probe >= 0 else {
            throw MarginError.io("cannot write \(path): \(String(cString: strerror(errno)).lowercased())")
        }
        close(probe)
        do {
            try write(temporary)
            try finish(temporary, check: check, target: path)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            // Writers report a full disk in their own words ("error while writing to output stream").
            if isDiskFull(at: temporary) { throw MarginError.io("cannot write \(path): the disk is full") }
            // Say what the system said, of the file asked for (not of the temporary beside it).
            if case MarginError.io(let message) = error, message.contains(temporary) {
                throw MarginError.io(message.replacingOccurrences(of: temporary, with: path))
            }
            throw error
        }
        staged.append((temporary, target))
        return target
    }

    /// Renames every staged file over its target. Returns the targets.
    @discardableResult
    public func commit() throws -> [String] {
        for (index, file) in staged.enumerated() {
            guard rename(file.temporary, file.target) == 0 else {
                let reason = String(cString: strerror(errno))
                for rest in staged[index...] { try? FileManager.default.removeItem(atPath: rest.temporary) }
                committed = true
                throw MarginError.io("cannot write \(file.target): \(reason)")
            }
        }
        committed = true
        for folder in Set(staged.map { ($0.target as NSString).deletingLastPathComponent }) { syncFolder(folder) }
        return staged.map(\.target)
    }

    /// Removes every staged temporary; the targets stay as they were.
    public func abort() {
        for file in staged { try? FileManager.default.removeItem(atPath: file.temporary) }
        staged = []
    }

    /// Makes the file user-only, checks it is whole, and flushes it to the disk.
    private func finish(_ temporary: String, check: FileCheck?, target: String) throws {
        let descriptor = open(temporary, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw writeError(target, errno, folder: temporary) }
        defer { close(descriptor) }
        _ = fchmod(descriptor, 0o600)
        guard fsync(descriptor) == 0 else { throw writeError(target, errno, folder: temporary) }
        guard let check else { return }
        if let problem = problem(with: temporary, check) {
            throw MarginError.io("cannot write \(target): \(isDiskFull(at: temporary) ? "the disk is full" : problem)")
        }
    }
}

/// Writes one file so that it is either complete or absent (see `AtomicFiles`).
@discardableResult
public func writeAtomically(
    to path: String, force: Bool, check: FileCheck? = nil, _ write: (String) throws -> Void
) throws -> String {
    let files = AtomicFiles(force: force)
    let target = try files.stage(path, check: check, write)
    try files.commit()
    return target
}

/// Why a written file is not whole, or nil when it passes the check.
private func problem(with path: String, _ check: FileCheck) -> String? {
    let size = fileSize(path) ?? 0
    switch check {
    case .bytes(let expected):
        return size == Int64(expected) ? nil : "only \(size) of \(expected) bytes were written"
    case .pdf(let pages, let password):
        guard tailBytes(of: path, 1024).range(of: Data("%%EOF".utf8)) != nil else {
            return "the PDF written is incomplete (\(size) bytes, no %%EOF)"
        }
        guard let document = try? PDFEngines.current.open(path: path, password: password) else {
            return "the PDF written does not open"
        }
        if let pages, document.pageCount != pages {
            return "the PDF written has \(document.pageCount) pages, not \(pages)"
        }
        return nil
    case .png:
        let end = tailBytes(of: path, 12)
        return end.count == 12 && end.subdata(in: 4..<8) == Data("IEND".utf8) ? nil : "the PNG written is incomplete"
    case .svg:
        let text = String(decoding: tailBytes(of: path, 64), as: UTF8.self)
        return text.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("</svg>")
            ? nil : "the SVG written is incomplete"
    }
}

/// The last `count` bytes of a file (fewer for a short file).
private func tailBytes(of path: String, _ count: Int) -> Data {
    guard let handle = FileHandle(forReadingAtPath: path) else { return Data() }
    defer { try? handle.close() }
    let size = (try? handle.seekToEnd()) ?? 0
    try? handle.seek(toOffset: size > UInt64(count) ? size - UInt64(count) : 0)
    return (try? handle.readToEnd()) ?? Data()
}

/// Flushes a folder's entries (a rename) to the disk.
func syncFolder(_ folder: String) {
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    _ = fsync(descriptor)
    close(descriptor)
}

/// Removes `.NAME.margin-<pid>-<id>` temporaries in `folder` whose writer has died.
func removeStaleTemporaries(in folder: String) {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    for name in names where name.hasPrefix(".") {
        guard let marker = name.range(of: ".margin-", options: .backwards) else { continue }
        let rest = name[marker.upperBound...]
        guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), !processIsAlive(pid) else {
            continue
        }
        try? FileManager.default.removeItem(atPath: folder + "/" + name)
    }
}
