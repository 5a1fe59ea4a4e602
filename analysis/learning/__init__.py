"""Learning from training with feedback: first encounters and learning curves for any design (`general`), the
exposure models (`exposures`, seeds/000 Appendix C), and their report sections (`report`)."""
