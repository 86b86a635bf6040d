import Foundation
import MarginCore
@_spi(Testing) import Poppler
import TestSupport
import Testing

@Suite struct OverlayRenderTests {
    /// Highlights are drawn translucent in their colour over the text; a marker is solid.
    /// Pixels are sampled above the first line's tallest possible glyph (baseline at y=52, 12 pt),
    /// so whichever font stands in for Helvetica on this machine, no glyph is sampled.
    @Test func overlaysAreDrawnInTheirColours() throws {
        let temp = TemporaryFolder()
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        let page = try document.page(1)
        let yellow = Overlay(x0: 72, y0: 4, x1: 300, y1: 30, red: 1, green: 0.9, blue: 0)
        let marker = Overlay(x0: 580, y0: 0, x1: 600, y1: 40, red: 0.8, green: 0, blue: 0, style: .marker)
        let path = temp.path + "/page.png"
        try page.render(to: path, format: .png, dpi: 72, overlays: [yellow, marker])
        let image = try PNGImage(path: path)
        let inside = image.pixel(x: 200, y: 15)
        #expect(inside.red > 240 && inside.green > 200 && inside.blue < 200, "yellow tint: \(inside)")
        let outside = image.pixel(x: 400, y: 300)
        #expect(outside == (255, 255, 255), "white page outside")
        let ribbon = image.pixel(x: 590, y: 20)
        #expect(ribbon.red > 180 && ribbon.green < 60, "red marker: \(ribbon)")
        let plain = temp.path + "/plain.png"
        try page.render(to: plain, format: .png, dpi: 72)
        #expect(try PNGImage(path: plain).pixel(x: 200, y: 15) == (255, 255, 255))
    }

    /// Rendering to bytes gives the PNG that rendering to a file writes (for a server to send).
    @Test func renderingToBytesGivesTheSamePNG() throws {
        let temp = TemporaryFolder()
        let page = try Document(path: Fixtures.pdf("sample.pdf")).page(2)
        let marker = Overlay(x0: 10, y0: 10, x1: 40, y1: 40, red: 0, green: 0, blue: 1, style: .marker)
        let path = temp.path + "/page.png"
        try page.render(to: path, format: .png, dpi: 50, overlays: [marker])
        let bytes = try page.renderPNG(dpi: 50, overlays: [marker])
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG signature")
        #expect(bytes == FileManager.default.contents(atPath: path))
        #expect(bytes.count > 1000)
    }

    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func lastPageOfALongDocumentRendersWithoutLoadingEveryPage() throws {
        let corpus = try #require(Fixtures.corpus)
        let document = try Document(path: corpus + "/real/sicp__sicp.pdf")
        #expect(document.pageCount > 800)
        let temp = TemporaryFolder()
        try document.page(document.pageCount).render(to: temp.path + "/last.png", format: .png, dpi: 36)
        #expect(try PNGImage(path: temp.path + "/last.png").width > 100)
    }
}
