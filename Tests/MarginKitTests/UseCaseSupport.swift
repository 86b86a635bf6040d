import Foundation
import MarginCore
import MarginKit
import MarginSQLite
import Poppler
import TestSupport
import Testing

/// A `Downloader` that fails the test which reached for the network: the use cases run here
/// touch no network, and one that tries is a defect (an unexpected fetch in a read, say).
struct FailClosedDownloader: Downloader {
    func download(_ request: DownloadRequest) async throws -> DownloadResult {
        Issue.record("a use case reached for the network: \(request.url)")
        throw MarginError.unreachable(url: request.url, reason: "the network is closed in these tests")
    }
}

/// A library for one test: an in-memory SQLite store, a temporary cache, the fail-closed
/// downloader, and text extracted in process.
final class TestLibrary: Sendable {
    let folder = TemporaryFolder()
    let library: Library

    init() throws {
        PDFEngines.install(PopplerEngine())
        library = try Library(
            store: try LibraryDatabase(), cache: folder.path + "/cache", keyFile: folder.path + "/key",
            configuration: Configuration(), downloader: FailClosedDownloader())
    }

    /// Adds fixture PDFs by path; every one must succeed.
    @discardableResult
    func add(_ names: String..., options: AddOptions = AddOptions()) async throws -> [BookInfo] {
        let outcomes = await library.add(names.map { Fixtures.pdf($0) }, options: options, jobs: 1)
        for outcome in outcomes { #expect(outcome.ok, "\(outcome.input): \(outcome.error ?? "")") }
        return outcomes.compactMap(\.book)
    }
}
