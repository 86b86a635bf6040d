import Foundation

/// Paths to the project's fixtures and the shared corpus.
public enum Fixtures {
    /// The project root (the folder holding Package.swift).
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.path
            }
        }
        return FileManager.default.currentDirectoryPath
    }()

    /// `fixtures/pdf/NAME`.
    public static func pdf(_ name: String) -> String { root + "/fixtures/pdf/" + name }

    /// `../shared/corpus`, or nil when it is absent (tests that need it then skip).
    public static var corpus: String? {
        let path = (root as NSString).deletingLastPathComponent + "/shared/corpus"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Writes a book of `pages` pages, each saying its number (fixtures/make-fixtures.py --long).
    public static func makeLong(_ path: String, pages: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root + "/fixtures/make-fixtures.py", "--long", path, String(pages)]
        try process.start()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Writes a book with a page for each text, its lines at its newlines, typeset in the font's
    /// WinAnsiEncoding (typographic quotes and dashes as printed) (fixtures/make-fixtures.py --pages).
    public static func makePages(_ path: String, _ texts: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root + "/fixtures/make-fixtures.py", "--pages", path] + texts
        try process.start()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    public static func bytes(_ path: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: path) ?? Data())
    }
}

/// A fresh temporary folder, removed when the value is released.
public final class TemporaryFolder: Sendable {
    public let path: String

    public init() {
        path = NSTemporaryDirectory() + "margin-test-" + UUID().uuidString.prefix(8).lowercased()
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Every file below the folder, relative paths, sorted.
    public func files() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var result = [String]()
        while let next = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path + "/" + next, isDirectory: &isDirectory)
            if !isDirectory.boolValue { result.append(next) }
        }
        return result.sorted()
    }
}
