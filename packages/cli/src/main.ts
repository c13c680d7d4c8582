console.log("quoteflow: not yet");
