import Foundation
import TestSupport
import Testing

/// A 2,000-page PDF adds, searches and renders its last page with memory that does not grow
/// with the page count beyond the text itself (compared with a 200-page one).
@Suite struct BigInputTests {
    /// Peak resident memory in KiB of one margin run, and its exit status.
    func peak(_ box: Sandbox, _ arguments: [String]) throws -> (Int, Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "maxrss=%M", MarginRunner.binary] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["MARGIN_HOME": box.home]) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.start()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let value =
            text.components(separatedBy: "maxrss=").last.flatMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            } ?? 0
        return (value, process.terminationStatus)
    }

    @Test func twoThousandPages() throws {
        let box = Sandbox()
        var peaks = [Int: [Int]]()
        for pages in [200, 2000] {
            let path = box.folder.path + "/long-\(pages).pdf"
            try Fixtures.makeLong(path, pages: pages)
            let library = Sandbox()
            var runs = [Int]()
            for arguments in [
                ["add", path], ["search", "\"page \(pages - 1) of\""],
                ["render", "1", "--page", String(pages), "--dpi", "72", "-o", box.folder.path + "/last-\(pages).png"],
            ] {
                let (kilobytes, status) = try peak(library, arguments)
                #expect(status == 0, "\(arguments)")
                runs.append(kilobytes)
            }
            peaks[pages] = runs
            let hits = try #require(
                try library.ok("search", "\"page \(pages) of\"", "--json").json() as? [[String: Any]])
            #expect(hits.map { $0.int("page") } == [pages], "the last page is found")
        }
        let small = try #require(peaks[200])
        let large = try #require(peaks[2000])
        print("big inputs: peak KiB for add/search/render, 200 pages \(small), 2000 pages \(large)")
        // 1,800 more pages hold about 100 KiB more text; allow for the index and working copies.
        #expect(large[0] - small[0] < 24 * 1024, "add: \(large[0] - small[0]) KiB more")
        #expect(large[1] - small[1] < 8 * 1024, "search: \(large[1] - small[1]) KiB more")
        #expect(large[2] - small[2] < 8 * 1024, "render of the last page: \(large[2] - small[2]) KiB more")
    }
}
