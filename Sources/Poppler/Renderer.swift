internal import CPoppler
import Foundation
import MarginCore

extension Page {
    /// Pixel size of a raster rendering at `dpi`, rounded up as pdftocairo does
    /// (`ceil(points × dpi / 72)`, in that order, so 792 pt at 150 dpi is exactly 1650).
    public func pixelSize(dpi: Double) -> (width: Int, height: Int) {
        let (width, height) = size
        // The epsilon keeps a size fitted to N pixels at N despite floating-point noise.
        return (Int((width * dpi / 72 - 1e-6).rounded(.up)), Int((height * dpi / 72 - 1e-6).rounded(.up)))
    }

    /// Renders the page to `path`. PNG: at `dpi` on a white background, like
    /// `pdftocairo -png -r DPI`. SVG and PDF are vector, at the page's size in points.
    /// `overlays` are drawn on top (highlights, bookmark marks).
    public func render(to path: String, format: RenderFormat, dpi: Double = 72, overlays: [Overlay] = []) throws {
        let (width, height) = size
        switch format {
        case .png:
            let status = try withImage(dpi: dpi, overlays: overlays) { cairo_surface_write_to_png($0, path) }
            guard status == CAIRO_STATUS_SUCCESS else { throw PopplerError.renderFailed(message(status)) }
        case .svg, .pdf:
            let surface =
                format == .svg
                ? cairo_svg_surface_create(path, width, height) : cairo_pdf_surface_create(path, width, height)
            guard let surface else { throw PopplerError.renderFailed("cairo could not create \(path)") }
            defer { cairo_surface_destroy(surface) }
            try check(surface)
            try draw(on: surface, scale: 1, background: false, printing: true, overlays: overlays)
            cairo_surface_finish(surface)
            try check(surface)
        }
    }

    /// The page as PNG bytes, at `dpi` on a white background (as `render(to:format: .png)`
    /// writes it), for a caller that serves or keeps the image itself.
    public func renderPNG(dpi: Double = 72, overlays: [Overlay] = []) throws -> Data {
        let sink = PNGSink()
        let status = try withImage(dpi: dpi, overlays: overlays) { surface in
            cairo_surface_write_to_png_stream(
                surface,
                { closure, bytes, length in
                    guard let closure, let bytes else { return CAIRO_STATUS_WRITE_ERROR }
                    Unmanaged<PNGSink>.fromOpaque(closure).takeUnretainedValue().data.append(bytes, count: Int(length))
                    return CAIRO_STATUS_SUCCESS
                }, Unmanaged.passUnretained(sink).toOpaque())
        }
        guard status == CAIRO_STATUS_SUCCESS else { throw PopplerError.renderFailed(message(status)) }
        return sink.data
    }

    /// Draws the page on a new image surface at `dpi` and hands it to `body`.
    /// The page in 8-bit gray at `dpi` (white background), for recognition.
    public func renderGray(dpi: Double) throws -> GrayImage {
        try withImage(dpi: dpi, overlays: []) { surface in
            cairo_surface_flush(surface)
            let width = Int(cairo_image_surface_get_width(surface))
            let height = Int(cairo_image_surface_get_height(surface))
            let stride = Int(cairo_image_surface_get_stride(surface))
            guard let data = cairo_image_surface_get_data(surface) else {
                throw PopplerError.renderFailed("cairo gave no pixels")
            }
            var pixels = [UInt8](repeating: 255, count: width * height)
            pixels.withUnsafeMutableBufferPointer { gray in
                for y in 0..<height {
                    let row = UnsafeRawPointer(data + y * stride)
                    for x in 0..<width {
                        let value = row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                        // ITU-R BT.601 luma, in integers.
                        let red = (value >> 16) & 0xff, green = (value >> 8) & 0xff, blue = value & 0xff
                        gray[y * width + x] = UInt8((red * 299 + green * 587 + blue * 114) / 1000)
                    }
                }
            }
            return GrayImage(width: width, height: height, pixels: pixels, dpi: dpi)
        }
    }

    private func withImage<T>(dpi: Double, overlays: [Overlay], _ body: (OpaquePointer) throws -> T) throws -> T {
        let (pixelsWide, pixelsHigh) = pixelSize(dpi: dpi)
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(pixelsWide), Int32(pixelsHigh))
        else { throw PopplerError.renderFailed("cairo could not create a \(pixelsWide)×\(pixelsHigh) image") }
        defer { cairo_surface_destroy(surface) }
        try check(surface)
        try draw(on: surface, scale: dpi / 72, background: true, printing: false, overlays: overlays)
        return try body(surface)
    }

    private func draw(on surface: OpaquePointer, scale: Double, background: Bool, printing: Bool, overlays: [Overlay])
        throws
    {
        guard let cairo = cairo_create(surface) else { throw PopplerError.renderFailed("cairo_create failed") }
        defer { cairo_destroy(cairo) }
        if background {
            cairo_set_source_rgb(cairo, 1, 1, 1)
            cairo_paint(cairo)
        }
        cairo_scale(cairo, scale, scale)
        if printing {
            poppler_page_render_for_printing(page, cairo)
        } else {
            poppler_page_render(page, cairo)
        }
        for overlay in overlays {
            cairo_rectangle(cairo, overlay.x0, overlay.y0, overlay.x1 - overlay.x0, overlay.y1 - overlay.y0)
            switch overlay.style {
            case .highlight:
                // Multiply keeps the text under a highlight dark, as a highlighter pen does.
                cairo_set_operator(cairo, CAIRO_OPERATOR_MULTIPLY)
                cairo_set_source_rgba(cairo, overlay.red, overlay.green, overlay.blue, 0.45)
            case .marker:
                cairo_set_operator(cairo, CAIRO_OPERATOR_OVER)
                cairo_set_source_rgba(cairo, overlay.red, overlay.green, overlay.blue, 0.9)
            }
            cairo_fill(cairo)
        }
        let status = cairo_status(cairo)
        guard status == CAIRO_STATUS_SUCCESS else { throw PopplerError.renderFailed(message(status)) }
    }

    private func check(_ surface: OpaquePointer) throws {
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else { throw PopplerError.renderFailed(message(status)) }
    }
}

private func message(_ status: cairo_status_t) -> String {
    cairo_status_to_string(status).map { String(cString: $0) } ?? "cairo error \(status.rawValue)"
}

/// The bytes cairo streams out as it writes a PNG.
private final class PNGSink {
    var data = Data()
}

/// A PNG decoded by cairo, for comparing renderings in tests (not part of the wrapper's API).
@_spi(Testing) public final class PNGImage {
    private let surface: OpaquePointer
    public let width: Int
    public let height: Int
    private let stride: Int
    private let data: UnsafeMutablePointer<UInt8>

    public init(path: String) throws {
        try loadPoppler()
        guard let surface = cairo_image_surface_create_from_png(path),
            cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS
        else { throw PopplerError.renderFailed("cannot read the PNG \(path)") }
        self.surface = surface
        let format = cairo_image_surface_get_format(surface)
        guard format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24,
            let data = cairo_image_surface_get_data(surface)
        else {
            cairo_surface_destroy(surface)
            throw PopplerError.renderFailed("unsupported PNG pixel format in \(path)")
        }
        self.data = data
        width = Int(cairo_image_surface_get_width(surface))
        height = Int(cairo_image_surface_get_height(surface))
        stride = Int(cairo_image_surface_get_stride(surface))
    }

    deinit {
        cairo_surface_destroy(surface)
    }

    /// The (red, green, blue) of a pixel, 0...255 (premultiplied alpha ignored: renderings are opaque).
    public func pixel(x: Int, y: Int) -> (red: Int, green: Int, blue: Int) {
        let value = UnsafeRawPointer(data + y * stride + x * 4).loadUnaligned(as: UInt32.self)
        return (Int((value >> 16) & 0xff), Int((value >> 8) & 0xff), Int(value & 0xff))
    }
}
