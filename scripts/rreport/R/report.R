report <- function(x, ...) {
  stop("twinlab ships only a stand-in for the R package 'report'; install the real one to use it")
}
