import Foundation
import MarginCore
@_spi(Testing) import Poppler
import TestSupport
import Testing

@Suite struct RenderTests {
    func library() throws -> Sandbox {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        return box
    }

    /// Runs a command-line tool and returns its exit status.
    func tool(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.start()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func pngMatchesPdftocairoPixelForPixel() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/pdftocairo") else {
            Issue.record("pdftocairo is missing: make test installs poppler-utils")
            return
        }
        let box = try library()
        let ours = box.folder.path + "/ours.png"
        try box.ok("render", "sample", "--page", "2", "--dpi", "100", "-o", ours)
        let reference = box.folder.path + "/reference"
        #expect(
            try tool(
                "/usr/bin/pdftocairo",
                ["-png", "-r", "100", "-f", "2", "-l", "2", "-singlefile", Fixtures.pdf("sample.pdf"), reference]) == 0)
        let a = try PNGImage(path: ours)
        let b = try PNGImage(path: reference + ".png")
        #expect(a.width == b.width && a.height == b.height, "same size as pdftocairo")
        var differing = 0
        var inked = 0
        for y in 0..<min(a.height, b.height) {
            for x in 0..<min(a.width, b.width) {
                let p = a.pixel(x: x, y: y)
                let q = b.pixel(x: x, y: y)
                if abs(p.red - q.red) + abs(p.green - q.green) + abs(p.blue - q.blue) > 24 { differing += 1 }
                if p.red < 128 { inked += 1 }
            }
        }
        #expect(inked > 500, "the page has visible text")
        #expect(differing * 1000 <= a.width * a.height, "at most 0.1% of pixels differ: \(differing)")
    }

    @Test func defaultNameFitAndFormats() throws {
        let box = try library()
        let folder = box.folder.path + "/out"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try box.margin.run(["render", "sample", "--page", "1"], cwd: folder)
        #expect(result.status == 0, "\(result)")
        let image = try PNGImage(path: folder + "/a-sample-paper-p1.png")
        #expect(image.width == 1275 && image.height == 1650, "150 dpi by default")
        try box.ok("render", "sample", "--page", "1", "--width", "300", "-o", folder + "/fit.png")
        let fit = try PNGImage(path: folder + "/fit.png")
        #expect(fit.width == 300)
        #expect(abs(fit.height - 388) <= 1, "aspect ratio kept")
        try box.ok("render", "sample", "--page", "1", "--width", "300", "--height", "100", "-o", folder + "/box.png")
        #expect(try PNGImage(path: folder + "/box.png").height == 100, "fits inside the box")
        try box.ok("render", "sample", "--page", "3", "--format", "svg", "-o", folder + "/p3.svg")
        #expect(String(decoding: Fixtures.bytes(folder + "/p3.svg"), as: UTF8.self).contains("<svg"))
        try box.ok("render", "sample", "--page", "3", "--format", "pdf", "-o", folder + "/p3.pdf")
        let pdf = try Document(path: folder + "/p3.pdf")
        #expect(pdf.pageCount == 1)
        #expect(try pdf.page(1).text.contains("Zebra"), "a vector PDF keeps its text")
    }

    @Test func stdoutOutputIsAPNG() throws {
        let box = try library()
        let result = try box.margin.run(["render", "sample", "--page", "1", "--dpi", "30", "-o", "-"])
        #expect(result.status == 0)
        #expect(result.stdoutData.starts(with: [0x89, 0x50, 0x4E, 0x47]), "PNG signature on stdout")
        #expect(box.folder.files().filter { $0.hasSuffix(".png") }.isEmpty, "nothing left on disk")
    }

    @Test func badRenderRequests() throws {
        let box = try library()
        let out = box.folder.path + "/page.png"
        #expect(try box.fails("render", "sample", "--page", "4").stderr.contains("valid pages are 1-3"))
        #expect(try box.fails("render", "sample", "--page", "0").stderr.contains("out of range"))
        #expect(try box.margin.run(["render", "sample", "--page", "1", "--dpi", "0"]).status == 64)
        #expect(try box.margin.run(["render", "sample", "--page", "1", "--dpi", "-5"]).status == 64)
        #expect(
            try box.fails("render", "sample", "--page", "1", "-o", "/nonexistent-folder/x.png").stderr.contains(
                "does not exist"))
        try box.ok("render", "sample", "--page", "1", "--dpi", "20", "-o", out)
        let before = Fixtures.bytes(out)
        #expect(try box.fails("render", "sample", "--page", "2", "--dpi", "20", "-o", out).stderr.contains("--force"))
        #expect(Fixtures.bytes(out) == before, "an existing file is kept")
        try box.ok("render", "sample", "--page", "2", "--dpi", "20", "-o", out, "--force")
        #expect(Fixtures.bytes(out) != before)
        let capped = try box.ok(
            "render", "sample", "--page", "1", "--dpi", "100000", "-o", box.folder.path + "/big.png", "--json")
        #expect(capped.stderr.contains("capped the resolution"))
        let json = try #require(try capped.json() as? [String: Any])
        #expect((json["width"] as? Int ?? 0) <= 10000)
    }

    /// Render only reads: a missing file is named with the command that fetches it, and
    /// rendering works again once `fetch` brought it back from its source.
    @Test func renderNamesAMissingFileAndFetchBringsItBack() throws {
        let box = try library()
        let file = try #require(try box.books().first?.string("file"))
        try FileManager.default.removeItem(atPath: file)
        let output = box.folder.path + "/again.png"
        let refused = try box.fails("render", "sample", "--page", "1", "--dpi", "20", "-o", output)
        #expect(
            refused.stderr.contains("not in the cache") && refused.stderr.contains("'margin fetch 1'"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: file) && !FileManager.default.fileExists(atPath: output))
        try box.ok("fetch", "sample")
        #expect(FileManager.default.fileExists(atPath: file), "fetched again from its source")
        try box.ok("render", "sample", "--page", "1", "--dpi", "20", "-o", output)
    }
}
