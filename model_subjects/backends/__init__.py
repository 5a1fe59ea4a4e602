"""The model backends behind one contract (`base`: Backend, Stream, ModelLoadError), found by name through
`registry` (`load_backend`, `DEFAULT_BACKEND`): transformers (`hf`), llama.cpp (`llamacpp`), an OpenAI-compatible
server (`openai`, model_subjects/served/), encoder-decoder models (`seq2seq`). Importing this package imports none
of them: a backend's module is imported the first time its name is asked for."""
