import Foundation
import TestSupport
import Testing

/// Each library outside the core is seen by its adapter alone (and by the executables that
/// install the adapter): the use cases and front ends reach it through a port.
@Suite struct ArchitectureTests {
    /// The targets allowed to import each library (a module not listed may be imported anywhere).
    static let seenBy: [String: Set<String>] = [
        "Poppler": ["margin", "margin-full"],
        "Tesseract": ["margin", "margin-full"],
        "CPoppler": ["Poppler"],
        "CPopplerLoader": ["Poppler"],
        "GRDB": ["MarginSQLite"],
        "GRDBSQLite": ["MarginSQLite"],
        "CFTS5": ["MarginSQLite"],
        "PostgresNIO": ["MarginPostgres"],
        "NIOSSL": ["MarginPostgres"],
        "AsyncHTTPClient": ["MarginNetwork"],
        "Hummingbird": ["MarginServe"],
        "QPDF": ["MarginKit"],
        "Markup": ["MarginKit"],
        "MarginSQLite": ["MarginCLI"],
        "MarginPostgres": ["margin-full"],
        "MarginNetwork": ["margin-full"],
        "MarginServe": ["margin-full"],
    ]

    @Test func eachLibraryIsImportedByItsAdapterOnly() throws {
        let sources = Fixtures.root + "/Sources"
        var seen = [String: Set<String>]()
        for target in try FileManager.default.contentsOfDirectory(atPath: sources) {
            guard let files = FileManager.default.enumerator(atPath: sources + "/" + target) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: sources + "/" + target + "/" + file, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let at = words.firstIndex(of: "import"), at + 1 < words.count,
                        words[..<at].allSatisfy({ ["internal", "public", "@testable", "@_spi(Testing)"].contains($0) })
                    else { continue }
                    seen[String(words[at + 1]), default: []].insert(target)
                }
            }
        }
        #expect(seen["Poppler"] == ["margin", "margin-full"], "Poppler seen by \(seen["Poppler"] ?? [])")
        for (module, allowed) in Self.seenBy {
            let outside = (seen[module] ?? []).subtracting(allowed).subtracting([module])
            #expect(outside.isEmpty, "\(module) is imported by \(outside.sorted()): only \(allowed.sorted()) may")
        }
    }
}
