import MarginCLI
import MarginCore
import Poppler
import Snowball
import Tesseract

// `margin`: the library on this machine. Commands that need downloads, a team library or the
// reader's server run in `margin-full`, beside it (see `Services`).
PDFEngines.install(PopplerEngine())
TextRecognizers.install(TesseractRecognizer())
Stemmers.install(SnowballStemmer())
Margin.mainOnOneThread()
