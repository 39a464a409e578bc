// TEMPORARY (replaced by the parsing branch)
import type OpenAI from 'openai';
import { ParseError, type VisionReader } from './types';

export function createVisionReader(_llm: OpenAI, _model: string): VisionReader {
  return () => Promise.reject(new ParseError('vision is not available yet'));
}
